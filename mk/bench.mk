# Benchmarks: `make bench` builds and runs everything in bench/ (bench/README.md).
# Included from the Makefile; uses its CC, CFLAGS, BUILD, LDLIBS and
# $(LIBS). Prints figures and ratios; never fails on speed.
#
#   make bench                          all parts, a few minutes on 2 cores
#   make bench BENCH_ROUNDS=3           fewer interleaved throughput rounds
#   make bench BENCH_PEERS=/path        where the peer reference sources live
#
# The peer reference (shared/bench-peers/c/lockbench.c, the bare binary heap,
# and lockbench_wheel.c, the timing-wheel floor) is compiled from where it
# lies into $(BUILD)/bench/, exactly as its README builds it (cc -O2); it is
# never copied into this repository. Without it, the ratios are skipped.

BENCH_PEERS  ?= ../shared/bench-peers
BENCH_ROUNDS ?= 5
BENCH_SEED   ?= 42
BENCH_CLIENTS ?= 10,1000,100000
BENCH_EVENTS ?= 5000000,5000000,3000000
BENCH_MEM_EVENTS ?= 1000000
BENCH_RUNS   ?= 300
BENCH_SCENARIO ?= scenarios/gc-pause-outlives-lease.lsim
BENCH_BATCH_SEEDS ?= 1000
BENCH_RENDER_RUNS ?= 40

BENCH_DIR := $(BUILD)/bench
BENCH_BIN := $(BENCH_DIR)/locksim-bench
BENCH_SRC := bench/bench.c bench/workload.c bench/spawn.c
BENCH_REF_SRC := $(BENCH_PEERS)/c/lockbench.c
BENCH_WHEEL_SRC := $(BENCH_PEERS)/c/lockbench_wheel.c

.PHONY: bench bench-build bench-batch bench-render

$(BENCH_BIN): $(BENCH_SRC) $(wildcard bench/*.h) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ALL_INC) -Ibench -o $@ $(BENCH_SRC) $(LIBS) $(REAL_LDLIBS) $(LDLIBS)

ifneq ($(wildcard $(BENCH_REF_SRC)),)
BENCH_REF := $(BENCH_DIR)/lockbench_c2
BENCH_WHEEL := $(BENCH_DIR)/lockbench_wheel
$(BENCH_REF): $(BENCH_REF_SRC)
	@mkdir -p $(dir $@)
	$(CC) -O2 -DARITY=2 -o $@ $<
$(BENCH_WHEEL): $(BENCH_WHEEL_SRC)
	@mkdir -p $(dir $@)
	$(CC) -O2 -o $@ $<
BENCH_REF_ARGS := --ref $(BENCH_REF) --wheel $(BENCH_WHEEL)
else
BENCH_REF :=
BENCH_WHEEL :=
BENCH_REF_ARGS :=
endif

bench-build: $(BENCH_BIN) $(BUILD)/locksim $(BENCH_REF) $(BENCH_WHEEL)

# hyperfine (Debian package) for the whole-process run cost, installed like
# the build dependencies when missing and we are root; the C fork/exec loop
# measures the same thing without it.
bench: bench-build
	@echo "== machine: $$(nproc) cores, $$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $$(date -u '+%Y-%m-%d %H:%M UTC'), load $$(cut -d' ' -f1-3 /proc/loadavg)"
	@if [ -z "$(BENCH_REF)" ]; then \
	   echo "bench: $(BENCH_PEERS) is absent (no $(BENCH_REF_SRC)): skipping the ratio to the bare binary heap"; fi
	@echo "== 1. engine throughput on the peer workload"
	@$(BENCH_BIN) throughput --rounds $(BENCH_ROUNDS) --seed $(BENCH_SEED) \
	   --clients $(BENCH_CLIENTS) --events $(BENCH_EVENTS) $(BENCH_REF_ARGS)
	@echo
	@echo "== 2. per-run cost"
	@$(BENCH_BIN) runcost $(BUILD)/locksim $(BENCH_SCENARIO) --runs $(BENCH_RUNS) \
	   $(if $(BENCH_REF),--floor $(BENCH_REF) 5 1 $(BENCH_SEED) --) $(SCENARIOS)
	@echo
	@if ! command -v hyperfine >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	   echo "bench: installing hyperfine with apt-get"; \
	   apt-get install -y --no-install-recommends hyperfine >/dev/null 2>&1 || \
	   (apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends hyperfine >/dev/null 2>&1) || true; \
	 fi; \
	 if command -v hyperfine >/dev/null 2>&1; then \
	   hyperfine -N --style none --warmup 20 --runs $(BENCH_RUNS) \
	     --export-json $(BENCH_DIR)/runcost-hyperfine.json \
	     '$(BUILD)/locksim run $(BENCH_SCENARIO) --no-color' \
	     $(if $(BENCH_REF),'$(BENCH_REF) 5 1 $(BENCH_SEED)') >/dev/null 2>&1 && \
	   echo "hyperfine -N, $(BENCH_RUNS) runs after 20 warm-up runs (whole process):" && \
	   tr -d '\n' < $(BENCH_DIR)/runcost-hyperfine.json | \
	     grep -o '"command": *"[^"]*", *"mean": *[0-9.e-]*, *"stddev": *[0-9.e-]*, *"median": *[0-9.e-]*' | \
	     awk -F'"' '{ split($$0, f, /[:,]/); printf "  median %.3f ms  mean %.3f ms  %s\n", f[8] * 1000, f[4] * 1000, $$4 }'; \
	 else echo "bench: hyperfine not available; the fork/exec figures above stand alone"; fi
	@echo
	@echo "== 3. memory"
	@$(BENCH_BIN) memory --clients 1000,100000 --events $(BENCH_MEM_EVENTS)
	@echo
	@echo "== 4. batch and sweep (bench/batch.sh)"
	@bench/batch.sh ./$(BUILD)/locksim scenarios $(BENCH_BATCH_SEEDS) 5
	@echo
	@echo "== 5. headless PNG, whole process (bench/render.sh)"
	@bench/render.sh ./$(BUILD)/locksim $(BENCH_SCENARIO) $(BENCH_RENDER_RUNS) 3
	@echo
	@echo "== 6. a click's re-simulation in the window or the page (locksim-bench resim)"
	@$(BENCH_BIN) resim --runs 20 $(SCENARIOS)

# Batch throughput over the catalog (bench/batch.sh): runs/s at --jobs 1 and 2,
# the 60 x 3 x 2 x 100-seed sweep, and peak RSS at 1k, 10k and 100k runs.
bench-batch: $(BUILD)/locksim
	@bench/batch.sh ./$(BUILD)/locksim scenarios $(BENCH_BATCH_SEEDS) 5

# Whole-process headless PNG (bench/render.sh): `locksim render -o x.png`
# next to `-o x.svg` and `locksim run`, ms per process (min, median) and CPU.
bench-render: $(BUILD)/locksim
	@bench/render.sh ./$(BUILD)/locksim $(BENCH_SCENARIO) $(BENCH_RENDER_RUNS) 3
