# Entry points. `make test` and `make demo` install missing Debian packages, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEBIAN_PACKAGES := cmake g++ make libz3-dev z3 libprotobuf-dev protobuf-compiler libtbb-dev \
                   libxxhash-dev libonnx-dev libonnx-testdata libdnnl-dev libgtest-dev

.PHONY: deps configure build test demo clean format bench-verify validate-axioms

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

# Proves every candidate of data/gen/taso.cfg (dumped by the generator to CANDIDATES) and prints
# proved / not proved / time with the slowest queries; non-proofs are dumped as .smt2 files.
# Without a generator dump it runs on the hand-written fixture of tests/verify/.
CANDIDATES ?= $(BUILD)/candidates-taso.txt
VERIFY_THREADS ?= 2
bench-verify: configure
	cmake --build $(BUILD) -j $(JOBS) --target verisub-verify
	@f=$(CANDIDATES); if [ ! -f "$$f" ]; then \
	  echo "bench-verify: $$f not found; using the fixture tests/verify/candidates_*.txt"; \
	  f=$(BUILD)/candidates-fixture.txt; \
	  cat tests/verify/candidates_true.txt tests/verify/candidates_false.txt > $$f; \
	fi; \
	time $(BUILD)/verify/verisub-verify --verify $$f --out $(BUILD)/proved.txt \
	  --smt2-dir $(BUILD)/verify-smt2 --threads $(VERIFY_THREADS)

# Validates every axiom against the reference kernels on every shape with dimensions 1..4.
validate-axioms: configure
	cmake --build $(BUILD) -j $(JOBS) --target verisub-verify
	time $(BUILD)/verify/verisub-verify --validate-axioms --threads $(VERIFY_THREADS)
	$(BUILD)/verify/verisub-verify --redundant-axioms --threads $(VERIFY_THREADS)

format:
	find specs gen verify ruledb rewriter runtime tests -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
