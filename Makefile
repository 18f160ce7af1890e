# Entry points. `make test` and `make demo` install missing Debian packages, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEBIAN_PACKAGES := cmake g++ make libz3-dev z3 libprotobuf-dev protobuf-compiler libtbb-dev \
                   libxxhash-dev libonnx-dev libonnx-testdata libdnnl-dev libgtest-dev

.PHONY: deps configure build test demo clean format bench-gen

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

format:
	find specs gen verify ruledb rewriter runtime tests -name '*.h' -o -name '*.cc' | xargs clang-format -i

# Generator benchmark on TASO's search space, with 1 and 2 threads (wall, CPU, peak memory and
# counts come from the generator's own report).
bench-gen: build
	@for t in 1 2; do \
	  echo "== verisub-gen data/gen/taso.cfg, $$t thread(s)"; \
	  $(BUILD)/gen/verisub-gen --config data/gen/taso.cfg --candidates $(BUILD)/taso_candidates.txt \
	    --threads $$t --quiet | grep -E '^(threads|graphs visited|distinct fingerprints|buckets|double-equal|pairs in classes|candidate rules|time|peak memory)' \
	    || exit 1; \
	done

clean:
	rm -rf $(BUILD)
