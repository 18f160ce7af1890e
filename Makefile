# Entry points. `make test` and `make demo` install missing Debian packages, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEBIAN_PACKAGES := cmake g++ make libz3-dev z3 libprotobuf-dev protobuf-compiler libtbb-dev \
                   libxxhash-dev libonnx-dev libonnx-testdata libdnnl-dev libgtest-dev

.PHONY: deps configure build test demo clean format bench-opt demo-opt

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

configure: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	$(BUILD)/gen/verisub-gen --list-ops

# Rewriter benchmark: every model in $(BUILD)/models (written by verisub-models when the model
# builders are present) optimized with default settings. Uses $(RULES) when it exists, else the
# hand-written (unproved) fixture, saying so.
RULES ?= data/rules/taso.rules
BENCH_RULES = $(if $(wildcard $(RULES)),--rules $(RULES),--rules data/rules/handwritten.txt --allow-unproved)
bench-opt: configure
	-@cmake --build $(BUILD) -j $(JOBS) --target models 2>/dev/null || echo "bench-opt: no model builders in this tree"
	cmake --build $(BUILD) -j $(JOBS) --target verisub-bench-opt
	@[ -f $(RULES) ] || echo "bench-opt: $(RULES) not found; using data/rules/handwritten.txt (unproved)"
	$(BUILD)/rewriter/verisub-bench-opt $(BUILD)/models $(BENCH_RULES)

# The main job on one model: optimize, verify outputs, write the result and a report.
DEMO_MODEL ?= $(BUILD)/models/resnet50.onnx
demo-opt: configure
	-@cmake --build $(BUILD) -j $(JOBS) --target models 2>/dev/null || true
	cmake --build $(BUILD) -j $(JOBS) --target verisub-opt
	$(BUILD)/rewriter/verisub-opt $(DEMO_MODEL) -o $(BUILD)/demo_optimized.onnx $(BENCH_RULES) \
	  --verify-outputs --report $(BUILD)/demo_report.json

format:
	find specs gen verify ruledb rewriter runtime tests -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
