# SchedLab: the two commands of the README run through here.
#   make run   sets up a Debian 12 machine (as root), builds, opens the GUI on the
#              bundled demo (a recording and its replays side by side); with no
#              display it says so and writes the demo report instead.
#   make test  sets up, then runs in turn: test-plain (the dev build and every
#              GoogleTest suite), test-asan (the ASan+UBSan build and the whole
#              suite again under it) and test-fuzz (every libFuzzer target:
#              each importer, the rt-app reader and a replay's user text, for
#              FUZZ_SECONDS each, 45 s in `make test`, from the corpus in
#              tests/fuzz/corpus, one per CPU at a time; it prints each
#              one's executions and fails below 20,000 per 45 s, ctf below
#              2,000: run-fuzzers.sh says why). It stops at the first stage
#              that fails and prints each stage's wall time.
# Each stage also runs alone. FUZZ_SECONDS=600 FUZZ_GROW=1 make test-fuzz is the
# longer local fuzzing run that adds what it finds to the corpus (commit it);
# the sanitizer options live in CMakePresets.json (asan
# test preset) and tests/fuzz/run-fuzzers.sh, suppressions in tests/sanitizers/.
# `make setup` alone installs the Debian packages the build and tests need;
# it is idempotent and quiet when everything is already there.

SHELL := /bin/bash
JOBS ?= $(shell nproc)
DEMO := resources/demo/pipe-and-hogs.txt
OUT ?= demo-output

# qt6-charts-dev's CMake config needs Qt6OpenGLConfig.cmake (libqt6opengl6-dev),
# which qt6-base-dev only recommends. The tests compare against trace-cmd, perf
# (linux-perf), babeltrace2, pdftotext (poppler-utils) and lscpu (util-linux),
# and say "skipped" with the reason where one is missing; make bench runs
# hackbench (rt-tests) and KernelShark's loader (libkshark-dev). The sanitizers
# need llvm-symbolizer (llvm) to name frames: the leak suppressions inside
# babeltrace2 (tests/sanitizers/lsan.supp) match by function name.
PACKAGES := cmake ninja-build g++ clang libclang-rt-14-dev pkg-config \
  qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-svg-dev libgl-dev \
  libtraceevent-dev libtracecmd-dev libtracefs-dev libbabeltrace2-dev \
  libgtest-dev libgmock-dev libbenchmark-dev libkshark-dev libzstd-dev zlib1g-dev \
  trace-cmd linux-perf babeltrace2 poppler-utils util-linux fonts-dejavu-core rt-tests llvm parallel

.PHONY: setup build test test-plain test-asan test-fuzz run bench clean

setup:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
	    || { echo "setup: apt-get failed (run as root on Debian 12)"; exit 1; }; \
	fi

build: setup
	@[ -f build/dev/build.ninja ] || cmake --preset dev >/dev/null
	@cmake --build --preset dev -j $(JOBS)

test-plain: build
	ctest --preset dev -j $(JOBS)

# The ASan+UBSan options (halt on the first UBSan report, leak checking with
# the third-party suppressions of tests/sanitizers/lsan.supp) come with the
# asan test preset; tests labelled no-asan are left out there (none today).
test-asan: setup
	@[ -f build/asan/build.ninja ] || cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

# Only the fuzzer targets of the fuzz preset are built (clang, coverage + ASan
# + UBSan): the suites already ran in the two stages above. run-fuzzers.sh
# prints "fuzz: NAME N executions" per fuzzer and fails below its minimum.
FUZZ_SECONDS ?= 60
test-fuzz: setup
	@[ -f build/fuzz/build.ninja ] || cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS) --target fuzzers
	tests/fuzz/run-fuzzers.sh build/fuzz $(FUZZ_SECONDS)

test: setup
	@t0=$$(date +%s); \
	stage() { s=$$(date +%s); $(MAKE) --no-print-directory "$$@" || { echo "make test: $$1 FAILED"; exit 1; }; \
	  times="$$times $$1 $$(( $$(date +%s) - s ))s"; }; \
	stage test-plain; stage test-asan; stage test-fuzz FUZZ_SECONDS=45; \
	echo "make test: all passed in $$(( $$(date +%s) - t0 ))s ($${times# })"

run: build
	@mkdir -p $(OUT)
	@if [ -n "$$DISPLAY" ] || [ -n "$$WAYLAND_DISPLAY" ]; then \
	  exec build/dev/app/gui/schedlab $(DEMO) --replay cfs --replay bfs; \
	fi; \
	echo "No display (DISPLAY is not set): writing the demo report to $(OUT)/ instead."; \
	build/dev/app/cli/schedlab-cli report $(DEMO) --replay cfs --replay bfs -o $(OUT)/demo-report.pdf && \
	build/dev/app/cli/schedlab-cli render $(DEMO) -o $(OUT)/demo-timeline.png && \
	echo "Wrote $(OUT)/demo-report.pdf and $(OUT)/demo-timeline.png"

bench:
	tests/bench/run-import-bench.sh

clean:
	rm -rf build
