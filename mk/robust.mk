# Robustness targets, included from the Makefile (`include mk/robust.mk`):
#   make fuzz [FUZZ_SECONDS=60]  libFuzzer on the parser, the run path and the trace reader
#   make valgrind                every scenario's run and render paths, and the bad inputs
#   make determinism-cross       traces equal under gcc -O0, gcc -O2 and clang -O2
# It uses CC, CFLAGS, BUILD, LDLIBS, SCENARIOS and the $(BUILD)/... rules of the Makefile.
# Missing Debian packages (clang and its libFuzzer runtime, valgrind) are installed with
# apt-get when running as root, as the Makefile does for the build dependencies.
# Include it at the end of the Makefile; it leaves the default goal as it was.

ROBUST_SAVED_GOAL := $(.DEFAULT_GOAL)
# As in the Makefile: prerequisites below expand BUILD at once.
BUILD ?= build

FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build-fuzz
FUZZ_TARGETS := fuzz_parse fuzz_run fuzz_trace fuzz_shard
FUZZ_OPT     := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
# Per-target libFuzzer options: dictionary and the largest input tried.
FUZZ_ARGS_fuzz_parse := -dict=fuzz/lsim.dict -max_len=16384
FUZZ_ARGS_fuzz_run   := -dict=fuzz/lsim.dict -max_len=8192
FUZZ_ARGS_fuzz_trace := -dict=fuzz/trace.dict -max_len=65536
FUZZ_ARGS_fuzz_shard := -dict=fuzz/shard.dict -max_len=65536 -close_fd_mask=2
# The shard reader is the front end's (merge): its objects are linked in too.
FUZZ_CLI_OBJ := $(BUILD)/cli/shard.o $(BUILD)/cli/fanout.o $(BUILD)/cli/cli.o
# Seed corpora, copied into the build directory at fuzz time.
FUZZ_SEEDS_lsim = $(SCENARIOS) $(wildcard tests/parse_cases/*.lsim) $(wildcard tests/bad/*.lsim)

CROSS_BUILDS := build-cross/gcc-O0 build-cross/gcc-O2 build-cross/clang-O2
VALGRIND     := valgrind -q --error-exitcode=99 --leak-check=full \
                --errors-for-leak-kinds=definite,indirect,possible --track-fds=no

.PHONY: fuzz fuzz-deps fuzz-bins valgrind valgrind-deps determinism-cross clean-robust \
        cross-gcc-O0 cross-gcc-O2 cross-clang-O2

# Install Debian packages $(1) unless the shell test $(2) already succeeds.
define robust_need
	@if ! $(2) >/dev/null 2>&1; then \
	   if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	     echo "locksim: installing $(1) with apt-get"; \
	     (apt-get install -y --no-install-recommends $(1) >/dev/null 2>&1 || \
	      (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends $(1) >/dev/null)) || \
	      { echo "locksim: apt-get could not install $(1)"; exit 1; }; \
	   else \
	     echo "locksim: missing $(1); as root, run: apt-get install -y $(1)"; exit 1; \
	   fi; \
	 fi
endef

# ---- fuzzing (libFuzzer, clang) -------------------------------------------------------
FUZZ_PROBE := printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
              | $(FUZZ_CC) -fsanitize=fuzzer -x c -o /dev/null -

fuzz-deps:
	$(call robust_need,clang libclang-rt-14-dev,$(FUZZ_PROBE))

# Built inside a sub-make with BUILD=$(FUZZ_BUILD), CC=clang, OPT=$(FUZZ_OPT): the
# library gets coverage and sanitizers; the targets link libFuzzer's main.
fuzz-bins: $(patsubst %,$(BUILD)/fuzz/%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/%: fuzz/%.c fuzz/fuzz_common.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -fsanitize=fuzzer -Ifuzz -o $@ $< $(LIBS) $(REAL_LDLIBS) $(LDLIBS)

$(BUILD)/fuzz/fuzz_shard: fuzz/fuzz_shard.c fuzz/fuzz_common.h $(FUZZ_CLI_OBJ) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Icli -fsanitize=fuzzer -Ifuzz -o $@ $< $(FUZZ_CLI_OBJ) $(LIBS) $(REAL_LDLIBS) $(LDLIBS)

# Each target runs FUZZ_SECONDS on its corpus (kept in $(FUZZ_BUILD)/corpus/NAME across
# runs) plus the seeds. A crash leaves $(FUZZ_BUILD)/crashes/NAME-crash-* and fails.
fuzz: fuzz-deps $(BUILD)/locksim
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT="$(FUZZ_OPT)" fuzz-bins
	@rm -rf $(FUZZ_BUILD)/seeds
	@mkdir -p $(FUZZ_BUILD)/seeds/lsim $(FUZZ_BUILD)/seeds/trace $(FUZZ_BUILD)/seeds/shard $(FUZZ_BUILD)/crashes \
	          $(addprefix $(FUZZ_BUILD)/corpus/,$(FUZZ_TARGETS))
	@cp $(FUZZ_SEEDS_lsim) $(FUZZ_BUILD)/seeds/lsim/
	@for s in $(SCENARIOS) $(wildcard tests/parse_cases/*.lsim); do \
	   ./$(BUILD)/locksim run $$s --no-timeline \
	     --trace $(FUZZ_BUILD)/seeds/trace/$$(basename $$s .lsim).jsonl >/dev/null 2>&1 || true; \
	 done
	@for k in 1 2; do \
	   ./$(BUILD)/locksim batch scenarios/gc-pause-outlives-lease.lsim scenarios/fencing-rejects-stale-write.lsim \
	     --seeds 1..2 --algos lease,fenced-lease --shard $$k/2 --out $(FUZZ_BUILD)/seeds/shard/b$$k.jsonl 2>/dev/null; \
	   ./$(BUILD)/locksim sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=10s,40s --vary ttl=5s,30s \
	     --shard $$k/2 --out $(FUZZ_BUILD)/seeds/shard/s$$k.jsonl 2>/dev/null; \
	   ./$(BUILD)/locksim batch scenarios/gc-pause-outlives-lease.lsim --seeds 3,1..2,9 \
	     --shard $$k/2 --out $(FUZZ_BUILD)/seeds/shard/l$$k.jsonl 2>/dev/null; \
	   ./$(BUILD)/locksim sweep scenarios/gc-pause-outlives-lease.lsim --vary pause=10s,40s --vary ttl=5s,30s \
	     --vary fencing=off,on --vary latency=1ms,5ms --shard $$k/2 --out $(FUZZ_BUILD)/seeds/shard/f$$k.jsonl 2>/dev/null; \
	 done; true
	@st=0; for t in $(FUZZ_TARGETS); do \
	   case $$t in fuzz_trace) seeds=$(FUZZ_BUILD)/seeds/trace;; fuzz_shard) seeds=$(FUZZ_BUILD)/seeds/shard;; \
	     *) seeds=$(FUZZ_BUILD)/seeds/lsim;; esac; \
	   case $$t in fuzz_parse) args='$(FUZZ_ARGS_fuzz_parse)';; fuzz_run) args='$(FUZZ_ARGS_fuzz_run)';; \
	     fuzz_shard) args='$(FUZZ_ARGS_fuzz_shard)';; *) args='$(FUZZ_ARGS_fuzz_trace)';; esac; \
	   log=$(FUZZ_BUILD)/$$t.log; \
	   nice -n 10 ./$(FUZZ_BUILD)/fuzz/$$t $$args -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	     -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t- \
	     $(FUZZ_BUILD)/corpus/$$t $$seeds >$$log 2>&1; rc=$$?; \
	   execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	   cov=$$(grep -o 'cov: [0-9]*' $$log | tail -1); \
	   if [ $$rc -eq 0 ]; then echo "fuzz: $$t: $${execs:-?} executions in $(FUZZ_SECONDS)s, $$cov, no crash"; \
	   else st=1; echo "fuzz: $$t: FAILED (exit $$rc); see $$log and $(FUZZ_BUILD)/crashes/"; \
	     grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: invariant)|runtime error' $$log | head -5; fi; \
	 done; exit $$st

# ---- valgrind ---------------------------------------------------------------------------
valgrind-deps:
	$(call robust_need,valgrind,command -v valgrind)

# Exit 99 is valgrind's (an error or a leak); the program's own codes are checked apart.
valgrind: valgrind-deps $(BUILD)/locksim
	@mkdir -p $(BUILD)/valgrind
	@st=0; n=0; \
	 vg() { want=$$1; shift; n=$$((n + 1)); \
	   $(VALGRIND) ./$(BUILD)/locksim "$$@" >$(BUILD)/valgrind/out 2>$(BUILD)/valgrind/err; rc=$$?; \
	   if [ $$rc -ne $$want ]; then st=1; echo "valgrind: FAILED (exit $$rc, expected $$want): locksim $$*"; \
	     head -20 $(BUILD)/valgrind/err; fi; }; \
	 for s in $(SCENARIOS); do \
	   vg 0 run $$s --no-color --narrate --width 120 --trace $(BUILD)/valgrind/trace.jsonl; \
	   vg 0 run $$s --no-color --format json; \
	 done; \
	 vg 0 check $(SCENARIOS); \
	 vg 0 hash $(SCENARIOS); \
	 vg 0 demo; \
	 vg 0 list; \
	 vg 0 render scenarios/gc-pause-outlives-lease.lsim -o $(BUILD)/valgrind/picture.png; \
	 vg 0 render scenarios/gc-pause-outlives-lease.lsim -o $(BUILD)/valgrind/picture.svg --from 30s --to 33s; \
	 vg 0 matrix scenarios/gc-pause-outlives-lease.lsim --algos lease,fenced-lease --render $(BUILD)/valgrind/panels.png; \
	 for f in tests/bad/*.lsim; do \
	   if sed -n 1,3p $$f | grep -qE '^# tags:.*(heavy|memory-limit|known-bug)'; then continue; fi; \
	   want=$$(sed -n '1s/^# expect: \([0-9]*\).*/\1/p' $$f); \
	   args=$$(sed -n '2s/^# args: //p' $$f | sed "s|{}|$$f|g"); \
	   vg $${want:-65} $${args:-run $$f --no-color --narrate}; \
	 done; \
	 if [ $$st -eq 0 ]; then echo "valgrind: $$n runs of locksim, no errors and no leaks"; fi; exit $$st

# ---- the same traces from three compilers and optimisation levels -------------------------
# Phony steps: each sub-make builds its own directory (and finds it up to date next time).
cross-gcc-O0:
	@$(MAKE) --no-print-directory BUILD=build-cross/gcc-O0 CC=gcc OPT=-O0 build-cross/gcc-O0/locksim >/dev/null
cross-gcc-O2:
	@$(MAKE) --no-print-directory BUILD=build-cross/gcc-O2 CC=gcc OPT=-O2 build-cross/gcc-O2/locksim >/dev/null
cross-clang-O2:
	$(call robust_need,clang,command -v clang)
	@$(MAKE) --no-print-directory BUILD=build-cross/clang-O2 CC=clang OPT=-O2 build-cross/clang-O2/locksim >/dev/null

determinism-cross: cross-gcc-O0 cross-gcc-O2 cross-clang-O2
	@st=0; for b in $(CROSS_BUILDS); do ./$$b/locksim hash $(SCENARIOS) > $$b/hashes.txt || st=1; done; \
	 for b in build-cross/gcc-O2 build-cross/clang-O2; do \
	   if ! cmp -s build-cross/gcc-O0/hashes.txt $$b/hashes.txt; then st=1; \
	     echo "determinism-cross: $$b differs from build-cross/gcc-O0:"; diff build-cross/gcc-O0/hashes.txt $$b/hashes.txt; fi; \
	 done; \
	 if ! cmp -s build-cross/gcc-O0/hashes.txt tests/trace_hashes.txt; then st=1; \
	   echo "determinism-cross: traces differ from tests/trace_hashes.txt:"; diff tests/trace_hashes.txt build-cross/gcc-O0/hashes.txt; fi; \
	 if [ $$st -eq 0 ]; then echo "determinism-cross: $$(wc -l < build-cross/gcc-O0/hashes.txt) scenario traces identical under gcc -O0, gcc -O2 and clang -O2 (-Werror), equal to tests/trace_hashes.txt"; \
	 else echo "determinism-cross: FAILED"; fi; exit $$st

clean: clean-robust
clean-robust:
	rm -rf $(FUZZ_BUILD) build-cross

.DEFAULT_GOAL := $(ROBUST_SAVED_GOAL)
