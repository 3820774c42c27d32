# Entry points. `make demo` and `make test` install what is missing, build,
# and run; everything else is a building block of those two.
BUILD   ?= build
JOBS    ?= $(shell nproc)
CMAKE   ?= cmake

.PHONY: all deps configure build test demo bench bench-llm bench-zoo clean lit unit e2e conformance

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	$(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/build.ninja

build: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

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
