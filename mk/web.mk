# The web page (issue 22), included from the Makefile after mk/robust.mk:
#   make web       build/web/locksim.html: one self-contained file (the engine
#                  in wasm, the page's script and the catalog inlined) that
#                  works from disk (file://) and from any static web server
#   make test-web  the page in headless Chromium against the native binary
# emcc (Debian's emscripten, offline: its system libraries come prebuilt) and
# chromium are installed with apt-get when missing, as the build dependencies
# are. The page is built from the same sim/, render/ and run/ sources as the
# binary; only cli/ and gfx/ (SDL2) stay out, and run/plugin.c gives way to
# web/plugin_none.c (a page cannot load .so plugins).

WEB_DIR   := $(BUILD)/web
WEB_RUN   := run/run.c run/report.c run/scenario_file.c run/input.c run/sweep_tally.c
WEB_SRC   := $(SIM_SRC) $(RENDER_SRC) $(WEB_RUN) $(sort $(wildcard web/*.c))
WEB_CC    := NODE_PATH=/usr/share/nodejs emcc
WEB_FLAGS := -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -D_POSIX_C_SOURCE=200809L \
             $(ALL_INC) \
             -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 -sMODULARIZE=1 -sEXPORT_NAME=LocksimModule \
             -sEXPORTED_RUNTIME_METHODS=ccall,cwrap,UTF8ToString,HEAP32,HEAPU8

.PHONY: web web-deps test-web bench-web

web: $(WEB_DIR)/locksim.html

web-deps:
	$(call robust_need,emscripten node-acorn,command -v emcc)

# The scenarios are embedded (their .lsim files only: not the golden traces).
$(WEB_DIR)/locksim.html: $(WEB_SRC) $(SIM_HDR) $(RENDER_HDR) $(wildcard run/*.h) $(SCENARIOS) docs/scenarios.md docs/labs/README.md \
                         web/page.html web/page.css web/page.js web/bundle.js | web-deps
	@rm -rf $(WEB_DIR)/scenarios && mkdir -p $(WEB_DIR)/scenarios && cp $(SCENARIOS) $(WEB_DIR)/scenarios/
	@echo "web: emcc over $(words $(WEB_SRC)) sources of sim/, render/, run/ and web/"
	@$(WEB_CC) $(WEB_FLAGS) $(WEB_SRC) -o $(WEB_DIR)/locksim.js --embed-file $(WEB_DIR)/scenarios@/scenarios
	@NODE_PATH=/usr/share/nodejs node web/bundle.js $(WEB_DIR)/locksim.js $@

test-web: $(WEB_DIR)/locksim.html $(BUILD)/locksim
	$(call robust_need,chromium,command -v chromium)
	@tests/web_chromium.sh $(WEB_DIR)/locksim.html ./$(BUILD)/locksim

# The page's figures in real Chromium time (bench/web_bench.js): its size, the
# time to its first drawn timeline, a re-run and redraw of every scenario.
bench-web: $(WEB_DIR)/locksim.html $(BUILD)/locksim
	@node bench/web_bench.js $(WEB_DIR)/locksim.html ./$(BUILD)/locksim 5
