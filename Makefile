# Entry points. `make demo` and `make test` install what is missing, build,
# and run; everything else is a building block of those two.
JOBS    ?= $(shell nproc)
CMAKE   ?= cmake
# `make test SANITIZE=address,undefined` / `SANITIZE=thread`: the suite built
# with sanitizers, each in its own build directory (docs/reliability.md).
SANITIZE ?=
ifeq ($(SANITIZE),)
BUILD   ?= build
else ifeq ($(SANITIZE),thread)
BUILD   ?= build-tsan
else
BUILD   ?= build-asan
endif
# Fuzzing (fuzz/README.md): `make fuzz` runs every target FUZZ_SECONDS;
# `make test` runs each of FUZZ_SMOKE_TARGETS FUZZ_SMOKE_SECONDS from its
# committed corpus. The smoke leaves out onnx and torchscript: their fuzz
# build compiles the frontends a second time with clang + ASan, more than
# CI's time allows (docs/reliability.md, "CI cost"); `make fuzz-smoke
# FUZZ_SMOKE_TARGETS=all` runs every target, `make test
# FUZZ_SMOKE_TARGETS=none` none.
FUZZ_BUILD         ?= build-fuzz
FUZZ_SECONDS       ?= 300
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_ALL_TARGETS   := npy input_spec irpa safetensors tmod kernel_cache onnx torchscript
FUZZ_TARGETS       ?= $(FUZZ_ALL_TARGETS)
FUZZ_SMOKE_TARGETS ?= npy input_spec irpa safetensors tmod kernel_cache
ifeq ($(FUZZ_SMOKE_TARGETS),all)
override FUZZ_SMOKE_TARGETS := $(FUZZ_ALL_TARGETS)
endif

.PHONY: all deps configure build test demo bench bench-llm bench-zoo clean lit unit e2e \
        conformance fuzz fuzz-build fuzz-smoke sanitize-subset

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	$(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTURBINE_SANITIZE=$(SANITIZE)

configure: deps $(BUILD)/build.ninja

build: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

ifeq ($(SANITIZE),)
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
ifneq ($(FUZZ_SMOKE_TARGETS),none)
	$(MAKE) fuzz-smoke
endif
else
# The sanitizers' options and suppressions: tests/sanitizers/README.md.
test: build
	cd $(BUILD) && bash ../tests/sanitizers/run_ctest.sh $(SANITIZE) --output-on-failure -j $(JOBS)
endif

# The runtime-level subset under a sanitizer (tests/sanitizers/README.md):
# the runtime, artifact and kernel-cache tests and the runtime-level fuzz
# replays, without compiling the MLIR compiler libraries with the sanitizer.
sanitize-subset: configure
	bash tests/sanitizers/run_subset.sh $(SANITIZE) $(BUILD)

# The fuzz build: clang-22 + libFuzzer + ASan/UBSan, parsers only; links the
# normal build's compiler libraries (fuzz/FuzzBuild.cmake).
$(FUZZ_BUILD)/build.ninja: CMakeLists.txt fuzz/FuzzBuild.cmake fuzz/CMakeLists.txt
	$(CMAKE) -S . -B $(FUZZ_BUILD) -G Ninja -DTURBINE_FUZZ=ON -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
	  "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
	  -DTURBINE_NORMAL_BUILD_DIR=$(abspath build)

# FUZZ_BUILD_TARGETS: the <target>_fuzzer executables to build.
FUZZ_BUILD_TARGETS ?= $(FUZZ_TARGETS)
fuzz-build:
	$(MAKE) build SANITIZE= BUILD=build
	$(MAKE) $(FUZZ_BUILD)/build.ninja
	$(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS) --target $(addsuffix _fuzzer,$(FUZZ_BUILD_TARGETS))

fuzz: fuzz-build
	/usr/bin/python3 fuzz/make_seeds.py build $(FUZZ_BUILD)/seeds
	bash fuzz/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) fuzz $(FUZZ_TARGETS)

fuzz-smoke:
	$(MAKE) fuzz-build FUZZ_BUILD_TARGETS="$(FUZZ_SMOKE_TARGETS)"
	bash fuzz/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) smoke $(FUZZ_SMOKE_TARGETS)

demo: build
	@bash examples/demo/run_demo.sh $(BUILD)

# Side-by-side benchmarks (see benchmarks/README.md): sgemm vs OpenBLAS,
# per-dispatch overhead, whole models vs ONNX Runtime and torch, the LLM
# (prefill/decode tok/s) vs llama.cpp and torch.
bench: build
	bash benchmarks/run_matmul_benchmark.sh $(BUILD)
	bash benchmarks/run_dispatch_benchmark.sh $(BUILD)
	/usr/bin/python3 benchmarks/models/run_model_benchmark.py $(BUILD)
	/usr/bin/python3 benchmarks/llm/run_llm_benchmark.py $(BUILD)

# The llama-style LLM: llama.cpp (npm node-llama-cpp) and torch eager on the
# same GGUF weights (f32, f16, Q8_0, Q4_0), memory bandwidth (benchmarks/llm/).
bench-llm: build
	/usr/bin/python3 benchmarks/llm/run_llm_benchmark.py $(BUILD)

# The model zoo (benchmarks/zoo/README.md): every torchvision classification
# family plus sequence models, through ONNX and TorchScript, checked against
# torch and timed against ONNX Runtime and torch; rewrites the "Model zoo"
# section of docs/performance.md. Hours on 2 cores: ZOO_ARGS=--quick, or
# ZOO_ARGS='--models=resnet|mobilenet' for a subset (then the doc is kept).
ZOO_ARGS ?= --write-doc
bench-zoo: build
	/usr/bin/python3 benchmarks/zoo/run_zoo.py $(BUILD) $(ZOO_ARGS)

# ONNX backend tests, all suites (libonnx-testdata); rewrites the coverage doc.
# Exits 0 when the run completes, failing tests included.
conformance: build
	$(BUILD)/bin/turbine conformance --suite=all -j $(JOBS) --coverage=docs/onnx-coverage.md

clean:
	rm -rf $(BUILD)

# One label of the suite at a time (labels: unit, lit, e2e, onnx, example).
lit unit e2e: build
	cd $(BUILD) && ctest -L '^$@$$' --output-on-failure -j $(JOBS)
