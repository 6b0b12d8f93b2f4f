# sluice in two commands: `make demo` and `make test`. Each target installs
# what is missing (scripts/install-deps), configures a CMake preset
# (CMakePresets.json) and builds before it runs anything.
#
#   make demo       build the `sluice` program and the libraries it links (Release, build/), nothing
#                   else, and run `sluice demo`
#   make test       build, then the whole test suite (ctest, 2 at a time, per-test timeout);
#                   also installs what only tests need (chromium)
#   make bench      build, run every benchmark, write build/bench-results.json, print the table
#   make sanitize   the whole test suite under AddressSanitizer + UBSan (build-asan/)
#   make fuzz       the wire decoder under libFuzzer (clang, build-fuzz/) for FUZZ_SECONDS (default 60)
#
# Variables: JOBS (parallel compile jobs, default: all cores), WERROR (ON turns
# warnings into errors; default ON when CI=true, as .ci/run and CI services set it).

JOBS ?= $(shell nproc)
WERROR ?= $(if $(filter true 1,$(CI)),ON,OFF)

# $(call build,PRESET[,TARGET]): configure and build one preset (everything, or TARGET alone).
define build
	cmake --preset $(1) -DSLUICE_WERROR=$(WERROR)
	cmake --build --preset $(1) -j $(JOBS) $(if $(2),--target $(2))
endef

FUZZ_SECONDS ?= 60

.PHONY: build demo test bench sanitize fuzz deps test-deps clean

build: deps
	$(call build,default)

# The demo needs the program alone: the tests, their references and the
# samples wait for `make test`.
demo: deps
	$(call build,default,sluice_cli)
	build/tools/sluice demo

test: test-deps build
	ctest --preset default

bench: build
	cmake --build --preset default --target bench-results

sanitize: test-deps
	$(call build,asan)
	ctest --preset asan

fuzz: deps
	cmake -S fuzz -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS)
	fuzz/run.sh $(CURDIR)/build-fuzz/wire_fuzzer $(FUZZ_SECONDS) build-fuzz/work

deps:
	scripts/install-deps

# And what only tests need (chromium, for the report's test); a superset of deps.
test-deps:
	scripts/install-deps --tests

clean:
	rm -rf build build-debug build-asan
