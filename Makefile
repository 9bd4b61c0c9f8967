# locksim: one Makefile. `make run` plays the default scenario; `make test` runs every test.
# Missing Debian build dependencies are installed by the `deps` step (as root).

CC      ?= cc
OPT     ?= -O2
BUILD   ?= build
CFLAGS  ?=
CFLAGS  += -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -g $(OPT) \
           -D_POSIX_C_SOURCE=200809L
LDLIBS  += -lm -ldl

# Builds use every CPU (-jN, N from nproc) unless the command line gives -j:
# the CI's builds (plain, sanitizer, -O0/clang, fuzz) take half the time.
# Only the top make sets it; the makes it starts share its jobs.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

# Boundaries the build enforces: sim/ (with the scenario language in sim/lang/,
# and sim/algo/) sees only sim/; render/ sees sim/ and render/; run/ (files,
# orchestration, reports) sees sim/, render/ and run/; gfx/ (SDL2) sees sim/,
# render/ and gfx/; the front ends (cli/, tests, bench, fuzz) see all.
SIM_INC    := -Isim -Isim/lang
RENDER_INC := $(SIM_INC) -Irender
RUN_INC    := $(SIM_INC) -Irender -Irun
ALL_INC    := $(SIM_INC) -Isim/algo -Irender -Irun -Ireal
# real/ (the real backends: processes, sockets, redis-server) sees sim/,
# render/, run/ and real/; nothing below it includes real/.
REAL_INC   := $(SIM_INC) -Irender -Irun -Ireal
GFX_INC    := $(SIM_INC) -Irender -Igfx

# Debian packages the build needs, the pkg-config names and the commands that
# prove them. SDL2, SDL2_ttf and the DejaVu fonts draw the window and the
# heatmap (gfx/), FreeType and DejaVu the PNG timeline, libpng encodes them, giflib
# the animated GIF of render -o x.gif; SDL2_image reads them back in the tests,
# where xmllint (libxml2-utils) checks the SVG; parallel runs the GNU parallel
# example of examples/cluster/, tested; procps's pgrep finds workers left behind;
# hiredis (libhiredis-dev, 0.14.1 on Debian 12) is the Redis client of `locksim real`.
DEB_PKGS := pkg-config libcmocka-dev libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev \
            libpng-dev libgif-dev libfreetype-dev fonts-dejavu-core libxml2-utils parallel procps \
            libhiredis-dev
PC_MODS  := cmocka sdl2 SDL2_ttf SDL2_image libpng libgif freetype2 hiredis
DEB_CMDS := xmllint parallel pgrep

SIM_SRC    := $(sort $(wildcard sim/*.c sim/lang/*.c sim/algo/*.c))
RENDER_SRC := $(sort $(wildcard render/*.c))
SIM_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(SIM_SRC))
RENDER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(RENDER_SRC))
RUN_SRC    := $(sort $(wildcard run/*.c))
RUN_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(RUN_SRC))
REAL_SRC   := $(sort $(wildcard real/*.c))
REAL_OBJ   := $(patsubst %.c,$(BUILD)/%.o,$(REAL_SRC))
# gfx/: the SDL2 backends (PNG now, the window later), an archive of its own
# that only what draws links, with SDL's flags from pkg-config.
GFX_SRC    := $(sort $(wildcard gfx/*.c))
GFX_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(GFX_SRC))
GFX_LIB    := $(BUILD)/libgfx.a
# The same sources built position-independent as two modules the binary
# loads with dlopen only to draw (cli/gfx_mod.c), so `locksim run` and every
# other command start without their libraries: locksim-png.so (the PNG
# timeline, the animated GIF and the sweep heatmap: gfx/png.c, gif.c,
# heatmap_png.c, raster.c, pngio.c on libpng, giflib and FreeType) and locksim-gfx.so
# (the window on SDL2 and SDL2_ttf, 60; the window paints its scenes with
# raster.c too).
GFX_PIC    := $(patsubst %.c,$(BUILD)/gfx-pic/%.o,$(GFX_SRC))
PNG_MOD_SRC := gfx/png.c gfx/gif.c gfx/heatmap_png.c gfx/raster.c gfx/pngio.c
PNG_PIC    := $(patsubst %.c,$(BUILD)/gfx-pic/%.o,$(PNG_MOD_SRC))
SDL_PIC    := $(filter-out $(BUILD)/gfx-pic/gfx/png.o $(BUILD)/gfx-pic/gfx/gif.o $(BUILD)/gfx-pic/gfx/heatmap_png.o,$(GFX_PIC))
GFX_MOD    := $(BUILD)/locksim-gfx.so
PNG_MOD    := $(BUILD)/locksim-png.so
SDL_CFLAGS  = $$(pkg-config --cflags sdl2 SDL2_ttf SDL2_image libpng libgif freetype2)
SDL_LDLIBS  = $$(pkg-config --libs sdl2 SDL2_ttf SDL2_image libpng libgif freetype2)
# Link order: later archives serve earlier ones.
LIBS       := $(BUILD)/libreal.a $(BUILD)/librun.a $(BUILD)/librender.a $(BUILD)/libsim.a
# What libreal.a needs (real/resp.c speaks to Redis through hiredis): linked
# after it wherever it is linked. Not in LDLIBS, which the sanitize build
# sets on its command line; the web page (mk/web.mk) has no real/ and no hiredis.
REAL_LDLIBS = $$(pkg-config --libs hiredis)
CLI_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard cli/*.c)))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
GFX_TESTS  := $(BUILD)/tests/test_gfx
TEST_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
SCENARIOS  := $(sort $(wildcard scenarios/*.lsim))

.PHONY: all deps run test reality test-view test-slurm check-scenarios determinism hashes sanitize clean algo-headers oom \
        format format-check
all: $(BUILD)/locksim

# ---- dependencies ---------------------------------------------------------
$(BUILD)/.deps:
	@mkdir -p $(BUILD)
	@missing=""; \
	 command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"; \
	 for m in $(PC_MODS); do pkg-config --exists $$m 2>/dev/null || missing="$$missing $$m"; done; \
	 for m in $(DEB_CMDS); do command -v $$m >/dev/null 2>&1 || missing="$$missing $$m"; done; \
	 if [ -n "$$missing" ]; then \
	   if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	     echo "locksim: installing missing build dependencies ($(DEB_PKGS)) with apt-get"; \
	     (apt-get install -y --no-install-recommends $(DEB_PKGS) >/dev/null 2>&1 || \
	      (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends $(DEB_PKGS) >/dev/null)) || \
	      { echo "locksim: apt-get could not install $(DEB_PKGS)"; exit 1; }; \
	   else \
	     echo "locksim: missing build dependencies:$$missing"; \
	     echo "locksim: as root, run: apt-get install -y $(DEB_PKGS)"; exit 1; \
	   fi; \
	 fi
	@touch $@
deps: $(BUILD)/.deps

# ---- library, binary ---------------------------------------------------------
SIM_HDR    := $(wildcard sim/*.h sim/lang/*.h sim/algo/*.h)
RENDER_HDR := $(wildcard render/*.h)
RUN_HDR    := $(wildcard run/*.h)
REAL_HDR   := $(wildcard real/*.h)
CLI_HDR    := $(wildcard cli/*.h)
GFX_HDR    := $(wildcard gfx/*.h)

$(BUILD)/sim/%.o: sim/%.c $(BUILD)/.deps $(SIM_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SIM_INC) -c -o $@ $<

$(BUILD)/render/%.o: render/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RENDER_INC) -c -o $@ $<

$(BUILD)/run/%.o: run/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(RUN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RUN_INC) -c -o $@ $<

# Only resp.c includes hiredis's headers; the others see resp.h alone.
$(BUILD)/real/resp.o: HIREDIS_CFLAGS = $$(pkg-config --cflags hiredis)
$(BUILD)/real/%.o: real/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(RUN_HDR) $(REAL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(REAL_INC) $(HIREDIS_CFLAGS) -c -o $@ $<

$(BUILD)/gfx/%.o: gfx/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(GFX_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(GFX_INC) $(SDL_CFLAGS) -c -o $@ $<

$(BUILD)/gfx-pic/gfx/%.o: gfx/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(GFX_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC $(GFX_INC) $(SDL_CFLAGS) -c -o $@ $<

$(BUILD)/cli/%.o: cli/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(RUN_HDR) $(REAL_HDR) $(CLI_HDR) $(GFX_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Igfx -c -o $@ $<

$(BUILD)/libsim.a: $(SIM_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libreal.a: $(REAL_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/librun.a: $(RUN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/librender.a: $(RENDER_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(GFX_LIB): $(GFX_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The binary draws through the modules beside it, which find the scene code
# in the binary: -rdynamic exports it, and render/ and sim/ are linked whole
# so that what only a module calls is there too. locksim-png.so draws the
# PNG timeline (render, matrix --render) and the heatmap (sweep and merge
# --png) with libpng and FreeType, no SDL; locksim-gfx.so links SDL2 and
# SDL2_ttf for the window (view). Both write PNGs with libpng (no
# SDL2_image; only the tests read PNGs back with it).
$(GFX_MOD): $(SDL_PIC)
	$(CC) $(CFLAGS) -shared -fPIC -o $@ $(SDL_PIC) $$(pkg-config --libs sdl2 SDL2_ttf libpng freetype2) $(LDLIBS)

$(PNG_MOD): $(PNG_PIC)
	$(CC) $(CFLAGS) -shared -fPIC -Wl,--as-needed -o $@ $(PNG_PIC) $$(pkg-config --libs libpng libgif freetype2) $(LDLIBS)

# The clock shim `locksim real` preloads into redis-server (real/clockshim.h):
# its own library, not in libreal.a (it replaces clock_gettime, gettimeofday, time).
# Always built with -O2 and no sanitizer, whatever OPT says: it runs inside
# Debian's redis-server, which a shim needing the ASan runtime keeps from
# starting (the sanitize build's test_real saw every redis-server it
# preloaded never answer PING).
CLOCKSHIM  := $(BUILD)/real/locksim-clockshim.so
$(CLOCKSHIM): real/shim/clockshim.c real/clockshim.h $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(OPT),$(CFLAGS)) -O2 -Ireal -shared -fPIC -o $@ $<

$(BUILD)/locksim: $(CLI_OBJ) $(LIBS) $(GFX_MOD) $(PNG_MOD) $(CLOCKSHIM)
	$(CC) $(CFLAGS) -rdynamic -o $@ $(CLI_OBJ) $(BUILD)/libreal.a $(BUILD)/librun.a \
	  -Wl,--whole-archive $(BUILD)/librender.a $(BUILD)/libsim.a -Wl,--no-whole-archive $(REAL_LDLIBS) $(LDLIBS)

# ---- run -------------------------------------------------------------------------
# With a display: the window on the default scenario. Without one (CI, ssh):
# the terminal demo as before, and the same timeline as a PNG, saying where.
DEFAULT_SCENARIO := scenarios/gc-pause-outlives-lease.lsim
run: $(BUILD)/locksim
	@st=69; \
	 if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	   echo "locksim view $(DEFAULT_SCENARIO) --algos lease,fenced-lease   (the story, and the same faults with fencing; ? for the keys, q to quit)"; \
	   ./$(BUILD)/locksim view $(DEFAULT_SCENARIO) --algos lease,fenced-lease; st=$$?; \
	 fi; \
	 if [ $$st = 69 ]; then \
	   ./$(BUILD)/locksim demo || exit $$?; \
	   ./$(BUILD)/locksim render $(DEFAULT_SCENARIO) -o $(BUILD)/gc-pause-outlives-lease.png || exit $$?; \
	   ./$(BUILD)/locksim matrix $(DEFAULT_SCENARIO) --algos lease,fenced-lease \
	     --render $(BUILD)/gc-pause-lease-vs-fenced.png >/dev/null || exit $$?; \
	   echo; echo "No display for the window: the timeline is drawn in $(BUILD)/gc-pause-outlives-lease.png,"; \
	   echo "and beside the same faults with fencing in $(BUILD)/gc-pause-lease-vs-fenced.png"; \
	   echo "(with a display, make run opens them in a window: locksim view $(DEFAULT_SCENARIO) --algos lease,fenced-lease)"; \
	 else exit $$st; fi

# ---- lock.h is all an algorithm needs ----------------------------------------------
# Every algorithm (and the example plugin) compiles with only lock.h, what
# lock.h includes, the shared server models kv.h and db.h, and an algorithm's
# own private header (sim/algo/*_int.h, itself on lock.h only) in reach.
ALGO_HDRS := sim/lock.h sim/error.h sim/vtime.h sim/algo/kv.h sim/algo/db.h $(wildcard sim/algo/*_int.h)
ALGO_SRC  := $(sort $(wildcard sim/algo/*.c)) examples/algorithms/my_lock.c
$(BUILD)/algo-headers.ok: $(ALGO_SRC) $(ALGO_HDRS)
	@rm -rf $(BUILD)/algo-inc && mkdir -p $(BUILD)/algo-inc
	@cp $(ALGO_HDRS) $(BUILD)/algo-inc/
	@for f in $(ALGO_SRC); do \
	   cp $$f $(BUILD)/algo-inc/ && \
	   $(CC) $(CFLAGS) -fsyntax-only -I$(BUILD)/algo-inc $(BUILD)/algo-inc/$$(basename $$f) || \
	   { echo "algo-headers: $$f needs more than lock.h (and kv.h, db.h)"; exit 1; }; \
	 done
	@echo "algo-headers: $(words $(ALGO_SRC)) algorithm sources compile with only lock.h, kv.h, db.h and their own *_int.h in reach"
	@touch $@
algo-headers: $(BUILD)/algo-headers.ok

# ---- tests -----------------------------------------------------------------------
$(BUILD)/tests/test_real: $(CLOCKSHIM)
$(BUILD)/tests/%: tests/%.c tests/*.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests -o $@ $< $(LIBS) $(REAL_LDLIBS) $$(pkg-config --cflags --libs cmocka) $(LDLIBS)

# The allocation-failure sweep wraps the allocator of everything it links.
$(BUILD)/tests/test_alloc: tests/test_alloc.c tests/*.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests -o $@ $< $(LIBS) $(REAL_LDLIBS) $$(pkg-config --cflags --libs cmocka) $(LDLIBS) \
	  -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=free
# test_option_tables reads the commands' option tables as the program does:
# it links the front end's objects, cli/main.c built again with main renamed.
$(BUILD)/tests/cli_main.o: cli/main.c $(BUILD)/cli/main.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Igfx -Dmain=locksim_main -c -o $@ $<
$(BUILD)/tests/test_option_tables: tests/test_option_tables.c tests/*.h $(BUILD)/tests/cli_main.o $(CLI_OBJ) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Icli -Itests -o $@ $< $(BUILD)/tests/cli_main.o \
	  $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ)) $(BUILD)/libreal.a $(BUILD)/librun.a \
	  -Wl,--whole-archive $(BUILD)/librender.a $(BUILD)/libsim.a -Wl,--no-whole-archive $(REAL_LDLIBS) \
	  $$(pkg-config --cflags --libs cmocka) $(LDLIBS)
# The GIF's test decodes what the binary wrote with giflib and libpng.
$(BUILD)/tests/test_gif: tests/test_gif.c tests/*.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests $$(pkg-config --cflags libpng libgif) -o $@ $< $(LIBS) $(REAL_LDLIBS) \
	  $$(pkg-config --cflags --libs cmocka) $$(pkg-config --libs libpng libgif) $(LDLIBS)
# Tests of the pictures link gfx and SDL; no other test does.
$(GFX_TESTS): $(BUILD)/tests/%: tests/%.c tests/*.h $(GFX_LIB) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Igfx -Itests $(SDL_CFLAGS) -o $@ $< $(GFX_LIB) $(LIBS) $(REAL_LDLIBS) \
	  $$(pkg-config --cflags --libs cmocka) $(SDL_LDLIBS) $(LDLIBS)

# Every cmocka binary, then every scenario's `expect` lines through the CLI,
# the commands the docs show, README's newcomer guide (tests/newcomer_guide.sh),
# then the determinism check against a second build at -O0.
test: $(BUILD)/locksim $(TEST_BIN) $(BUILD)/algo-headers.ok
	@CC="$(CC)" OPT="$(OPT)" LDLIBS="$(LDLIBS)" \
	 tests/run_all.sh ./$(BUILD)/locksim scenarios/ -- $(TEST_BIN); st=$$?; \
	 $(MAKE) --no-print-directory determinism || st=1; \
	 if command -v emcc >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1; then \
	   echo "== the web page in headless Chromium (make test-web)"; \
	   $(MAKE) --no-print-directory test-web || st=1; \
	 else echo "web: skipped: emcc or chromium is not installed (make test-web installs them)"; fi; exit $$st

# The reality check (docs/reality.md, issue 23): every catalog scenario the
# redis, etcd or zookeeper backend can run, played 5 times against a real
# redis-server, etcd or ZooKeeper that locksim starts and stops itself; the
# table goes into docs/reality.md. The Debian packages redis-server,
# etcd-server, etcd-client and zookeeper (a JRE with it) are installed here
# if missing, as the build's dependencies are
# (as root, with apt-get). make test needs neither: its tests of `real`
# skip, saying so, without them.
REAL_PKGS := redis-server etcd-server etcd-client zookeeper
REALITY_REPEATS ?= 5
reality: $(BUILD)/locksim
	@if ! command -v redis-server >/dev/null 2>&1 || ! command -v etcd >/dev/null 2>&1 || \
	   ! test -r /usr/share/java/zookeeper.jar; then \
	   if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	     echo "locksim: installing $(REAL_PKGS) with apt-get"; \
	     (apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 $(REAL_PKGS) >/dev/null 2>&1 || \
	      (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 $(REAL_PKGS) >/dev/null)) || \
	      { echo "locksim: apt-get could not install $(REAL_PKGS)"; exit 1; }; \
	   else \
	     echo "locksim: redis-server, etcd or zookeeper is missing; as root, run: apt-get install -y $(REAL_PKGS)"; exit 1; \
	   fi; \
	 fi
	@mk/reality.sh ./$(BUILD)/locksim $(REALITY_REPEATS)

# The real window under an X server (Xvfb), driven by xdotool: .ci/run
# installs Xvfb, xdotool and ImageMagick and starts Xvfb :99 first.
test-view: $(BUILD)/locksim
	@tests/view_xvfb.sh ./$(BUILD)/locksim

# The Slurm recipe of examples/cluster under a real Slurm (issue 24): as root,
# installs slurm-wlm and munge with apt-get when missing, starts a one-node
# cluster on loopback in a mktemp folder, submits the array and its merge step,
# compares the merged files with the unsharded run's, and stops every daemon.
test-slurm: $(BUILD)/locksim
	@tests/slurm_cluster.sh ./$(BUILD)/locksim

check-scenarios: $(BUILD)/locksim
	./$(BUILD)/locksim check scenarios/

# Same traces at -O0 and -O2 (and against recorded hashes in tests/trace_hashes.txt).
determinism: $(BUILD)/locksim
	@$(MAKE) --no-print-directory BUILD=build-O0 OPT=-O0 build-O0/locksim >/dev/null
	@./$(BUILD)/locksim hash $(SCENARIOS) > $(BUILD)/hashes.txt
	@./build-O0/locksim hash $(SCENARIOS) > build-O0/hashes.txt
	@if cmp -s $(BUILD)/hashes.txt build-O0/hashes.txt && cmp -s $(BUILD)/hashes.txt tests/trace_hashes.txt; then \
	   echo "determinism: $$(wc -l < $(BUILD)/hashes.txt) scenario traces identical at -O0 and -O2 and equal to tests/trace_hashes.txt"; \
	 else \
	   echo "determinism: FAILED"; diff $(BUILD)/hashes.txt build-O0/hashes.txt; diff tests/trace_hashes.txt $(BUILD)/hashes.txt; exit 1; \
	 fi

# Out of memory in whole commands (issue 19, item 2): an LD_PRELOAD shim fails
# the N-th allocation of each process, for every N (a stride for check and
# explore); every command must behave as without it or exit 70 saying so.
$(BUILD)/oom_shim.so: tests/oom_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $< -lpthread

oom: $(BUILD)/locksim $(BUILD)/oom_shim.so
	@tests/oom_sweep.sh ./$(BUILD)/locksim ./$(BUILD)/oom_shim.so

# Rewrites tests/trace_hashes.txt (one `HASH  FILE` line per scenario, sorted by
# file: what `locksim hash` prints and `determinism` compares byte for byte)
# after adding or deliberately changing a scenario. Review its diff: any line
# that changes for an old scenario is a behaviour change.
hashes: $(BUILD)/locksim
	@./$(BUILD)/locksim hash $(SCENARIOS) > tests/trace_hashes.txt.new && \
	 mv tests/trace_hashes.txt.new tests/trace_hashes.txt || { rm -f tests/trace_hashes.txt.new; exit 1; }
	@echo "hashes: $$(wc -l < tests/trace_hashes.txt) scenario trace hashes written to tests/trace_hashes.txt"

# The one C style (.clang-format; Debian's clang-format 14, installed when
# missing like the other dependencies): `format` rewrites every tracked .c
# and .h in place; `format-check` changes nothing and lists the files that
# `format` would change (exit 1 when there is one).
CLANG_FORMAT ?= clang-format
format format-check:
	@command -v $(CLANG_FORMAT) >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	   echo "locksim: installing clang-format with apt-get" && \
	   apt-get install -y --no-install-recommends clang-format >/dev/null 2>&1; } || \
	   { echo "locksim: missing clang-format; as root, run: apt-get install -y clang-format"; exit 1; }
	@if [ $@ = format ]; then git ls-files '*.c' '*.h' | xargs $(CLANG_FORMAT) -i; \
	 else bad=$$(git ls-files '*.c' '*.h' | while read -r f; do \
	        $(CLANG_FORMAT) "$$f" | cmp -s - "$$f" || echo "$$f"; done); \
	   if [ -n "$$bad" ]; then echo "format-check: not in the style of .clang-format (make format fixes):"; \
	     echo "$$bad" | sed 's/^/  /'; exit 1; fi; \
	   echo "format-check: $$(git ls-files '*.c' '*.h' | wc -l) files in the style of .clang-format"; fi

sanitize:
	$(MAKE) BUILD=build-san OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDLIBS="-lm -ldl -fsanitize=address,undefined" test

clean:
	rm -rf build build-O0 build-san

# ---- benchmarks (bench/README.md) -------------------------------------------------
include mk/bench.mk

# ---- robustness: fuzz, valgrind, determinism-cross (fuzz/README.md, tests/bad/README.md)
include mk/robust.mk

# ---- install, uninstall (README.md, "Installing")
include mk/install.mk
include mk/web.mk
