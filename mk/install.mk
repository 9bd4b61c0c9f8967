# ---- install (README.md, "Installing") --------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]: the binary, its picture modules
# in PREFIX/lib/locksim (the binary finds them relative to itself), lock.h and
# what it includes with a pkg-config file for plugin authors, a man page per
# command and bash/zsh completions generated from `locksim help`, the docs and
# the scenario catalog. make uninstall removes exactly those files.
PREFIX  ?= /usr/local
DESTDIR ?=
INST     = $(DESTDIR)$(PREFIX)
INST_FILES_LIST = $(BUILD)/install-manifest.txt

.PHONY: install uninstall
install: $(BUILD)/locksim
	@set -e; root='$(INST)'; bin=./$(BUILD)/locksim; \
	 version=$$($$bin --version | awk '{print $$2}'); gen=$(BUILD)/install-gen; rm -rf $$gen; mkdir -p $$gen/man1; \
	 mk/install.sh man $$bin $$gen/man1; mk/install.sh bash $$bin $$gen/locksim.bash; \
	 mk/install.sh zsh $$bin $$gen/_locksim; mk/install.sh pc '$(PREFIX)' $$version $$gen/locksim.pc; \
	 : > $(INST_FILES_LIST); put() { install -D -m $$1 "$$2" "$$root/$$3"; echo "$$root/$$3" >> $(INST_FILES_LIST); }; \
	 put 755 $$bin bin/locksim; \
	 for m in locksim-png.so locksim-gfx.so; do [ ! -f $(BUILD)/$$m ] || put 755 $(BUILD)/$$m lib/locksim/$$m; done; \
	 [ ! -f $(BUILD)/real/locksim-clockshim.so ] || put 755 $(BUILD)/real/locksim-clockshim.so lib/locksim/locksim-clockshim.so; \
	 for h in lock.h error.h vtime.h; do put 644 sim/$$h include/locksim/$$h; done; \
	 put 644 $$gen/locksim.pc lib/pkgconfig/locksim.pc; \
	 for p in $$gen/man1/*.1; do put 644 $$p share/man/man1/$$(basename $$p); done; \
	 put 644 $$gen/locksim.bash share/bash-completion/completions/locksim; \
	 put 644 $$gen/_locksim share/zsh/site-functions/_locksim; \
	 put 644 README.md share/doc/locksim/README.md; \
	 for d in docs/*.md; do put 644 $$d share/doc/locksim/$$d; done; \
	 for s in scenarios/*.lsim; do put 644 $$s share/locksim/$$s; done; \
	 put 644 examples/algorithms/my_lock.c share/doc/locksim/examples/my_lock.c; \
	 echo "install: $$(wc -l < $(INST_FILES_LIST)) files under $$root (list: $(INST_FILES_LIST))"

uninstall:
	@set -e; root='$(INST)'; n=0; \
	 for f in bin/locksim lib/locksim/locksim-png.so lib/locksim/locksim-gfx.so lib/locksim/locksim-clockshim.so \
	          include/locksim/lock.h \
	          include/locksim/error.h include/locksim/vtime.h lib/pkgconfig/locksim.pc \
	          share/bash-completion/completions/locksim share/zsh/site-functions/_locksim; do \
	   [ ! -e "$$root/$$f" ] || { rm -f "$$root/$$f"; n=$$((n + 1)); }; done; \
	 for f in "$$root"/share/man/man1/locksim.1 "$$root"/share/man/man1/locksim-*.1; do \
	   [ ! -e "$$f" ] || { rm -f "$$f"; n=$$((n + 1)); }; done; \
	 for d in share/doc/locksim share/locksim; do [ ! -d "$$root/$$d" ] || { rm -rf "$$root/$$d"; n=$$((n + 1)); }; done; \
	 rmdir "$$root/lib/locksim" "$$root/include/locksim" 2>/dev/null || true; \
	 echo "uninstall: $$n files and folders removed under $$root"
