#!/usr/bin/env bash
# Writes the installed tree's generated files from the built binary's own
# help text, so that man pages and completions say what `locksim help` says:
#   mk/install.sh man BIN DIR         DIR/locksim.1 and DIR/locksim-COMMAND.1
#   mk/install.sh bash BIN FILE       a bash completion (commands, each one's options)
#   mk/install.sh zsh BIN FILE        the same for zsh (#compdef locksim)
#   mk/install.sh pc PREFIX VERSION FILE   locksim.pc for plugin authors
set -euo pipefail
what=$1; shift

# The commands, in the order `locksim help` lists them.
commands() { "$1" help | sed -n 's/^  locksim \([a-z-]*\) .*/\1/p' | grep -v '^help$' | awk '!seen[$0]++'; }
# A command's options, from its help text.
options() { "$1" help "$2" 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' '; }
# Help text as roff: a preformatted block, with roff's special characters escaped.
roff_text() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }

case $what in
man)
  bin=$1 dir=$2
  mkdir -p "$dir"
  version=$("$bin" --version | awk '{print $2}')
  page() { # NAME SECTION-TITLE ONE-LINE HELP-ARGS...
    local name=$1 line=$2; shift 2
    {
      printf '.TH %s 1 "" "locksim %s" "locksim manual"\n' "$(echo "$name" | tr a-z A-Z)" "$version"
      printf '.SH NAME\n%s \\- %s\n' "$name" "$line"
      printf '.SH DESCRIPTION\nThis page is the text of \\fBlocksim help%s\\fR.\n' "${1:+ $1}"
      printf '.PP\n.nf\n'
      "$bin" help "$@" | roff_text
      printf '.fi\n.SH SEE ALSO\n'
      if [ $# -eq 0 ]; then
        commands "$bin" | sed 's/.*/\\fBlocksim-&\\fR(1)/' | paste -sd, - | sed 's/,/, /g'
      else
        printf '\\fBlocksim\\fR(1)\n'
      fi
    } > "$dir/$name.1"
  }
  page locksim "a deterministic simulator of distributed-lock pathologies"
  for c in $(commands "$bin"); do
    line=$("$bin" help | grep "^  locksim $c " | head -1 | cut -c34-) # the description column
    page "locksim-$c" "${line:-locksim $c}" "$c"
  done
  ;;
bash)
  bin=$1 out=$2
  {
    echo "# bash completion for locksim, generated from \`locksim help\` by mk/install.sh"
    echo "_locksim() {"
    echo '  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}'
    echo "  if [ \"\$COMP_CWORD\" -eq 1 ]; then COMPREPLY=(\$(compgen -W \"$(commands "$bin" | tr '\n' ' ')help --version\" -- \"\$cur\")); return; fi"
    echo '  case $cmd in'
    for c in $(commands "$bin"); do
      echo "    $c) if [[ \$cur == -* ]]; then COMPREPLY=(\$(compgen -W \"$(options "$bin" "$c")\" -- \"\$cur\")); return; fi ;;"
    done
    echo "    help) COMPREPLY=(\$(compgen -W \"$(commands "$bin" | tr '\n' ' ')metrics formats\" -- \"\$cur\")); return ;;"
    echo '  esac'
    echo '  COMPREPLY=($(compgen -f -- "$cur"))'
    echo "}"
    echo "complete -o filenames -F _locksim locksim"
  } > "$out"
  ;;
zsh)
  bin=$1 out=$2
  {
    echo "#compdef locksim"
    echo "# zsh completion for locksim, generated from \`locksim help\` by mk/install.sh"
    echo "local -a cmds opts"
    echo "cmds=($(commands "$bin" | tr '\n' ' ')help --version)"
    echo 'if (( CURRENT == 2 )); then compadd -a cmds; return; fi'
    echo 'case $words[2] in'
    for c in $(commands "$bin"); do echo "  $c) opts=($(options "$bin" "$c")) ;;"; done
    echo "  help) compadd -a cmds; compadd metrics formats; return ;;"
    echo 'esac'
    echo 'if [[ $PREFIX == -* ]]; then compadd -a opts; else _files; fi'
  } > "$out"
  ;;
pc)
  prefix=$1 version=$2 out=$3
  cat > "$out" <<PC
prefix=$prefix
includedir=\${prefix}/include/locksim

Name: locksim
Description: the lock-algorithm plugin interface of locksim (lock.h): build with -shared -fPIC, run with locksim run FILE --algo ./plugin.so
Version: $version
Cflags: -I\${includedir}
PC
  ;;
*) echo "mk/install.sh: unknown target '$what' (man, bash, zsh or pc)" >&2; exit 64 ;;
esac
