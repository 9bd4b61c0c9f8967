# locksim: one Makefile. `make run` plays the default scenario; `make test` runs every test.
# Missing Debian build dependencies are installed by the `deps` step (as root).

CC      ?= cc
OPT     ?= -O2
BUILD   ?= build
CFLAGS  ?=
CFLAGS  += -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -g $(OPT) \
           -D_POSIX_C_SOURCE=200809L
LDLIBS  += -lm -ldl

# Boundaries the build enforces: sim/ (and sim/algo/) sees only sim/; render/
# sees sim/ and render/; run/ (files, orchestration, reports) sees sim/, render/
# and run/; the
# front ends (cli/, tests, bench, fuzz) see all.
SIM_INC    := -Isim
RENDER_INC := -Isim -Irender
RUN_INC    := -Isim -Irender -Irun
ALL_INC    := -Isim -Isim/algo -Irender -Irun

# Debian packages the build needs, the pkg-config names and the commands that
# prove them (parallel: the GNU parallel example in examples/cluster/, tested).
DEB_PKGS := pkg-config libcmocka-dev parallel
PC_MODS  := cmocka
DEB_CMDS := parallel

SIM_SRC    := $(sort $(wildcard sim/*.c sim/algo/*.c))
RENDER_SRC := $(sort $(wildcard render/*.c))
SIM_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(SIM_SRC))
RENDER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(RENDER_SRC))
RUN_SRC    := $(sort $(wildcard run/*.c))
RUN_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(RUN_SRC))
# Link order: later archives serve earlier ones.
LIBS       := $(BUILD)/librun.a $(BUILD)/librender.a $(BUILD)/libsim.a
CLI_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard cli/*.c)))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
TEST_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
SCENARIOS  := $(sort $(wildcard scenarios/*.lsim))

.PHONY: all deps run test check-scenarios determinism sanitize clean
all: $(BUILD)/locksim

# ---- dependencies ---------------------------------------------------------
$(BUILD)/.deps:
	@mkdir -p $(BUILD)
	@missing=""; \
	 command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"; \
	 for m in $(PC_MODS); do pkg-config --exists $$m 2>/dev/null || missing="$$missing $$m"; done; \
	 for c in $(DEB_CMDS); do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
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
SIM_HDR    := $(wildcard sim/*.h sim/algo/*.h)
RENDER_HDR := $(wildcard render/*.h)
RUN_HDR    := $(wildcard run/*.h)
CLI_HDR    := $(wildcard cli/*.h)

$(BUILD)/sim/%.o: sim/%.c $(BUILD)/.deps $(SIM_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SIM_INC) -c -o $@ $<

$(BUILD)/render/%.o: render/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RENDER_INC) -c -o $@ $<

$(BUILD)/run/%.o: run/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(RUN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RUN_INC) -c -o $@ $<

$(BUILD)/cli/%.o: cli/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR) $(RUN_HDR) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -c -o $@ $<

$(BUILD)/libsim.a: $(SIM_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/librun.a: $(RUN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/librender.a: $(RENDER_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/locksim: $(CLI_OBJ) $(LIBS)
	$(CC) $(CFLAGS) -rdynamic -o $@ $(CLI_OBJ) $(LIBS) $(LDLIBS)

# ---- run -------------------------------------------------------------------------
run: $(BUILD)/locksim
	./$(BUILD)/locksim demo

# ---- tests -----------------------------------------------------------------------
$(BUILD)/tests/%: tests/%.c tests/*.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests -o $@ $< $(LIBS) $$(pkg-config --cflags --libs cmocka) $(LDLIBS)

# The allocation-failure sweep wraps the allocator of everything it links.
$(BUILD)/tests/test_alloc: tests/test_alloc.c tests/*.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests -o $@ $< $(LIBS) $$(pkg-config --cflags --libs cmocka) $(LDLIBS) \
	  -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=free

# Every cmocka binary, then every scenario's `expect` lines through the CLI,
# then the determinism check against a second build at -O0.
test: $(BUILD)/locksim $(TEST_BIN)
	@tests/run_all.sh ./$(BUILD)/locksim scenarios/ -- $(TEST_BIN); st=$$?; \
	 $(MAKE) --no-print-directory determinism || st=1; exit $$st

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

sanitize:
	$(MAKE) BUILD=build-san OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDLIBS="-lm -ldl -fsanitize=address,undefined" test

clean:
	rm -rf build build-O0 build-san

# ---- benchmarks (bench/README.md) -------------------------------------------------
include mk/bench.mk

# ---- robustness: fuzz, valgrind, determinism-cross (fuzz/README.md, tests/bad/README.md)
include mk/robust.mk
