# datadyn: `make` builds every tool into build/bin/, `make test` runs the suites,
# `make demo` runs every pipeline on the built-in defaults (configs/*/demo.sh), into out/demo/.
# Each target first installs missing Debian packages (scripts/deps.sh).

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
CMAKE_FLAGS ?=
# CI treats warnings as errors.
ifeq ($(CI),true)
  CMAKE_FLAGS += -DDATADYN_WERROR=ON
endif

.PHONY: all build deps configure test test-clients test-farm demo bench format clean

all: build

deps:
	@scripts/deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	@scripts/deps.sh
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Tests that need Blender, ParaView or TinyUSDZ carry the CTest label `clients`; `make
# test-clients` installs them (TinyUSDZ from the npm registry, run by Node.js) and runs them. The Slurm test carries `farm`; `make test-farm` installs Slurm.
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE 'clients|farm'

test-clients: build
	@scripts/deps.sh --extra blender paraview python3-paraview
	@command -v npm >/dev/null || scripts/deps.sh --extra nodejs npm
	tests/clients/fetch_tinyusdz.sh $(BUILD_DIR)/tests/clients/tinyusdz
	cd $(BUILD_DIR) && ctest --output-on-failure -L clients

test-farm: build
	@scripts/deps.sh --extra slurmctld slurmd slurm-client
	cd $(BUILD_DIR) && ctest --output-on-failure -L farm

demo: build
	scripts/demo.sh $(BUILD_DIR)/bin out/demo

bench: build
	scripts/bench.sh $(BUILD_DIR)

format:
	find lib tools tests bench -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

# Only what the build, the demo and the benchmarks write: results the example scripts put
# elsewhere in out/ (out/water, out/elastic, ...) are the user's.
clean:
	rm -rf $(BUILD_DIR) out/demo out/bench
