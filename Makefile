# A thin front door over CMake. `make run` and `make test` install what is missing (Debian
# packages, when run as root), configure, build, and then run or test.
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
SPEC       ?= specs/residual_relu.yaml
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

# nvcc from /usr/local/cuda when it is not on PATH.
ifeq ($(shell command -v nvcc),)
  ifneq ($(wildcard /usr/local/cuda/bin/nvcc),)
    export CUDACXX := /usr/local/cuda/bin/nvcc
  endif
endif

.PHONY: all deps configure build run test clean bundle

all: build

# `make test` also installs what the tests need (chromium): prerequisites inherit DEPS_ARGS.
DEPS_ARGS ?=
deps:
	@bash tools/install-deps.sh $(DEPS_ARGS)

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/kq run $(SPEC)

test: DEPS_ARGS := --test
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j 2

bundle: build
	bash tools/bundle.sh $(BUILD) dist/kq

clean:
	rm -rf $(BUILD)
