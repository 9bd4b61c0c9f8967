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
# sees sim/ and render/; the front ends (cli/, tests, bench, fuzz) see all.
SIM_INC    := -Isim
RENDER_INC := -Isim -Irender
ALL_INC    := -Isim -Isim/algo -Irender

# Debian packages the build needs, and the pkg-config names that prove them.
DEB_PKGS := pkg-config libcmocka-dev
PC_MODS  := cmocka

SIM_SRC    := $(sort $(wildcard sim/*.c sim/algo/*.c))
RENDER_SRC := $(sort $(wildcard render/*.c))
SIM_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(SIM_SRC))
RENDER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(RENDER_SRC))
# Link order: later archives serve earlier ones.
LIBS       := $(BUILD)/librender.a $(BUILD)/libsim.a
CLI_OBJ    := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard cli/*.c)))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
TEST_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
SCENARIOS  := $(sort $(wildcard scenarios/*.lsim))

.PHONY: all deps run test check-scenarios determinism sanitize clean algo-headers
all: $(BUILD)/locksim

# ---- dependencies ---------------------------------------------------------
$(BUILD)/.deps:
	@mkdir -p $(BUILD)
	@missing=""; \
	 command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"; \
	 for m in $(PC_MODS); do pkg-config --exists $$m 2>/dev/null || missing="$$missing $$m"; done; \
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

$(BUILD)/sim/%.o: sim/%.c $(BUILD)/.deps $(SIM_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SIM_INC) -c -o $@ $<

$(BUILD)/render/%.o: render/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(RENDER_INC) -c -o $@ $<

$(BUILD)/cli/%.o: cli/%.c $(BUILD)/.deps $(SIM_HDR) $(RENDER_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -c -o $@ $<

$(BUILD)/libsim.a: $(SIM_OBJ)
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

# ---- lock.h is all an algorithm needs ----------------------------------------------
# Every algorithm (and the example plugin) compiles with only lock.h, what
# lock.h includes, and the shared server models kv.h and db.h in reach.
ALGO_HDRS := sim/lock.h sim/error.h sim/vtime.h sim/algo/kv.h sim/algo/db.h
ALGO_SRC  := $(sort $(wildcard sim/algo/*.c)) examples/algorithms/my_lock.c
$(BUILD)/algo-headers.ok: $(ALGO_SRC) $(ALGO_HDRS)
	@rm -rf $(BUILD)/algo-inc && mkdir -p $(BUILD)/algo-inc
	@cp $(ALGO_HDRS) $(BUILD)/algo-inc/
	@for f in $(ALGO_SRC); do \
	   cp $$f $(BUILD)/algo-inc/ && \
	   $(CC) $(CFLAGS) -fsyntax-only -I$(BUILD)/algo-inc $(BUILD)/algo-inc/$$(basename $$f) || \
	   { echo "algo-headers: $$f needs more than lock.h (and kv.h, db.h)"; exit 1; }; \
	 done
	@echo "algo-headers: $(words $(ALGO_SRC)) algorithm sources compile with only lock.h, kv.h and db.h in reach"
	@touch $@
algo-headers: $(BUILD)/algo-headers.ok

# ---- tests -----------------------------------------------------------------------
$(BUILD)/tests/%: tests/%.c tests/*.h $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Itests -o $@ $< $(LIBS) $$(pkg-config --cflags --libs cmocka) $(LDLIBS)

# Every cmocka binary, then every scenario's `expect` lines through the CLI,
# then the determinism check against a second build at -O0.
test: $(BUILD)/locksim $(TEST_BIN) $(BUILD)/algo-headers.ok
	@tests/run_all.sh ./$(BUILD)/locksim $(SCENARIOS) -- $(TEST_BIN); st=$$?; \
	 $(MAKE) --no-print-directory determinism || st=1; exit $$st

check-scenarios: $(BUILD)/locksim
	./$(BUILD)/locksim check $(SCENARIOS)

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
