# Entry points. `make test` and `make demo` install missing Debian packages, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEBIAN_PACKAGES := cmake g++ make libz3-dev z3 libprotobuf-dev protobuf-compiler libtbb-dev \
                   libxxhash-dev libonnx-dev libonnx-testdata libdnnl-dev libgtest-dev \
                   libhalide14-0-dev
# The Python module and its test (make test installs them too; make demo does not need them).
PYTHON_PACKAGES := pybind11-dev python3-dev python3-numpy python3-onnx

.PHONY: deps configure build test demo clean format

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES) $(EXTRA_PACKAGES); do \
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

# Target-specific: the prerequisites (deps through build and configure) see it too.
test: EXTRA_PACKAGES = $(PYTHON_PACKAGES)
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The main job on built-in defaults, building only the programs it runs: write a benchmark model,
# optimize it with the shipped rules (data/rules/taso.pb; outputs checked against the original in
# the reference executor; the optimized model, a JSON report and an HTML page written), then run the model on
# the oneDNN CPU backend twice, side by side: as it is (plain layouts, no rewrites) and as
# verisub runs it (rewrites, layouts chosen by the layout DP), outputs checked against the
# reference backend; the last line is the ratio of the two medians.
DEMO_MODEL ?= squeezenet1_1
DEMO_RUNS ?= 30
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target verisub-models verisub-opt verisub-run
	mkdir -p $(BUILD)/models
	$(BUILD)/runtime/models/verisub-models --out $(BUILD)/models $(DEMO_MODEL)
	$(BUILD)/rewriter/verisub-opt $(BUILD)/models/$(DEMO_MODEL).onnx -o $(BUILD)/$(DEMO_MODEL).optimized.onnx \
	  --verify-outputs --report $(BUILD)/$(DEMO_MODEL).report.json --report-html $(BUILD)/$(DEMO_MODEL).report.html
	@echo "== $(DEMO_MODEL) as it is: plain layouts, no rewrites"
	$(BUILD)/session/verisub-run $(BUILD)/models/$(DEMO_MODEL).onnx --layout plain --runs $(DEMO_RUNS) \
	  --check | tee $(BUILD)/demo.plain.txt
	@echo "== $(DEMO_MODEL) as verisub runs it: proved rewrites, layouts by the layout DP"
	$(BUILD)/session/verisub-run $(BUILD)/models/$(DEMO_MODEL).onnx --optimize --runs $(DEMO_RUNS) \
	  --check | tee $(BUILD)/demo.verisub.txt
	@a=$$(sed -n 's/^verisub-run: median_ms=\([0-9.]*\).*/\1/p' $(BUILD)/demo.plain.txt); \
	 b=$$(sed -n 's/^verisub-run: median_ms=\([0-9.]*\).*/\1/p' $(BUILD)/demo.verisub.txt); \
	 awk -v a="$$a" -v b="$$b" 'BEGIN { printf "demo: %s ms as it is, %s ms with verisub: %.2fx (one run each, this machine)\n", a, b, a / b }'
	@echo "demo: the optimizer's report: $(BUILD)/$(DEMO_MODEL).report.html"
	@if command -v chromium > /dev/null 2>&1; then \
	  timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1500,1100 \
	    --screenshot=$(abspath $(BUILD))/$(DEMO_MODEL).report.png file://$(abspath $(BUILD))/$(DEMO_MODEL).report.html \
	    > /dev/null 2>&1 && echo "demo: its screenshot (headless chromium): $(BUILD)/$(DEMO_MODEL).report.png"; fi

# Load time of a 1,000-rule database (protobuf and text forms).
# Each further target declares itself .PHONY beside its rule.
.PHONY: bench-ruledb
bench-ruledb: configure
	cmake --build $(BUILD) -j $(JOBS) --target ruledb_load_bench
	$(BUILD)/tests/ruledb/ruledb_load_bench --count 1000

# Proves the candidates of data/gen/taso.cfg: first those the pipeline gives the prover (after
# syntactic pruning; verisub-gen --prepruned), then every raw candidate of the generator
# (verisub-gen --candidates). Prints proved / not proved / time with the slowest queries; the
# first set's non-proofs are dumped as .smt2 files that `z3 FILE` replays.
# CANDIDATES=FILE proves that file instead.
VERIFY_THREADS ?= 2
.PHONY: bench-verify
bench-verify: configure
	cmake --build $(BUILD) -j $(JOBS) --target verisub-gen verisub-verify
ifdef CANDIDATES
	time $(BUILD)/verify/verisub-verify --verify $(CANDIDATES) --out $(BUILD)/proved.txt \
	  --smt2-dir $(BUILD)/verify-smt2 --threads $(VERIFY_THREADS)
else
	$(BUILD)/gen/verisub-gen --config data/gen/taso.cfg --prepruned $(BUILD)/prepruned-taso.txt \
	  --quiet | tail -1
	time $(BUILD)/verify/verisub-verify --verify $(BUILD)/prepruned-taso.txt \
	  --out $(BUILD)/proved.txt --smt2-dir $(BUILD)/verify-smt2 --threads $(VERIFY_THREADS)
	$(BUILD)/gen/verisub-gen --config data/gen/taso.cfg --candidates $(BUILD)/candidates-taso.txt \
	  --quiet | tail -1
	time $(BUILD)/verify/verisub-verify --verify $(BUILD)/candidates-taso.txt \
	  --out $(BUILD)/proved-raw.txt --threads $(VERIFY_THREADS)
endif

# Validates every axiom against the reference kernels on every shape with dimensions 1..4.
.PHONY: validate-axioms
validate-axioms: configure
	cmake --build $(BUILD) -j $(JOBS) --target verisub-verify
	time $(BUILD)/verify/verisub-verify --validate-axioms --threads $(VERIFY_THREADS)
	$(BUILD)/verify/verisub-verify --redundant-axioms --threads $(VERIFY_THREADS)

# Rewriter benchmark: every model in $(BUILD)/models (written by verisub-models when the model
# builders are present) optimized with default settings. Uses $(RULES) when it exists, else the
# hand-written (unproved) fixture, saying so.
RULES ?= data/rules/taso.pb
BENCH_RULES = $(if $(wildcard $(RULES)),--rules $(RULES),--rules data/rules/handwritten.txt --allow-unproved)
.PHONY: bench-opt
bench-opt: configure
	-@cmake --build $(BUILD) -j $(JOBS) --target models 2>/dev/null || echo "bench-opt: no model builders in this tree"
	cmake --build $(BUILD) -j $(JOBS) --target verisub-bench-opt
	@[ -f $(RULES) ] || echo "bench-opt: $(RULES) not found; using data/rules/handwritten.txt (unproved)"
	$(BUILD)/rewriter/verisub-bench-opt $(BUILD)/models $(BENCH_RULES)

# Development models of issue 14, exported by PyTorch as users do (eval mode, constant folding,
# so BatchNormalization is folded into Conv): ResNet-50, MobileNet-v2, Inception-v3,
# SqueezeNet-1.1, ShuffleNet-v2 x1.0 at 1x3x224x224, a BERT-base encoder (12 layers, 1x128x768)
# and a GPT-2-small decoder (12 layers with a causal mask, 1x128x768), random seeded weights, each
# with a recorded input and PyTorch's output, into $(DEV_MODELS) (not in git; about 950 MB). Models already there are skipped;
# DEV_MODEL="NAME ..." exports only those. Needs Debian's python3-torch, python3-torchvision and
# python3-onnx, installed here when missing.
DEV_MODELS ?= $(BUILD)/devmodels
DEV_MODEL_PACKAGES := python3-torch python3-torchvision python3-onnx python3-numpy
.PHONY: dev-models
dev-models:
	@/usr/bin/python3 -c 'import torch, torchvision, onnx, numpy' 2>/dev/null || { \
	  echo "dev-models: /usr/bin/python3 lacks torch, torchvision, onnx or numpy;" \
	       "installing $(DEV_MODEL_PACKAGES)"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  { $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(DEV_MODEL_PACKAGES); } || { \
	    echo "dev-models: could not install $(DEV_MODEL_PACKAGES) (Debian bookworm packages);" \
	         "the models are exported with PyTorch, so they cannot be made without them" >&2; \
	    exit 1; }; }
	/usr/bin/python3 bench/models/export_dev_models.py --out $(DEV_MODELS) \
	  $(foreach m,$(DEV_MODEL),--only $(m))

# ONNX Runtime's CPU engine for node (onnxruntime-node $(ORT_VERSION) from the npm registry) in
# $(BUILD)/ort, for benchmarks only; says so and fails when the registry cannot be reached.
ORT_VERSION ?= 1.30.0
.PHONY: ort
ort:
	@sh bench/ort/install.sh $(BUILD)/ort $(ORT_VERSION)

# The GPU check (issue 27), for a machine with an NVIDIA GPU: builds, then runs every GPU test,
# every development model on the CUDA backend (checked against the reference backend, plain and
# --optimize) and PyTorch on the same GPU (eager, CUDA graphs, torch.compile), and prints the
# table (bench/gpu/gpu_check.sh; logs in $(BUILD)/gpu-check). About 8 minutes on an H200.
.PHONY: gpu-check
gpu-check: configure
	cmake --build $(BUILD) -j $(JOBS) --target cuda_tests verisub-run verisub-models \
	  verisub-igemm-bench
	sh bench/gpu/gpu_check.sh $(BUILD) $(BUILD)/gpu-check

# Every development model against ONNX Runtime, side by side in one run with alternating
# repetitions: (a) ORT at its highest optimization level on the original, (b) ORT on verisub-opt's
# output, (c) verisub-run, (d) verisub-run --optimize (n/a while verisub-run is not built), at
# 1 and 2 threads; medians in ms and ratios to (a); ORT's outputs on the original and on
# verisub-opt's output compared. BENCH_ROUNDS alternations of BENCH_RUNS runs after BENCH_WARMUP
# warm-ups per column; BENCH_MODEL="NAME ..." runs only those models.
BENCH_ROUNDS ?= 3
BENCH_RUNS ?= 5
BENCH_WARMUP ?= 2
BENCH_THREADS ?= 1,2
.PHONY: bench-run
bench-run: DEV_MODEL = $(BENCH_MODEL)
bench-run: configure dev-models ort
	cmake --build $(BUILD) -j $(JOBS) --target verisub-opt verisub-onnx
	@if cmake --build $(BUILD) --target help | grep -q 'verisub-run'; then \
	  cmake --build $(BUILD) -j $(JOBS) --target verisub-run; fi
	node bench/run_bench.js --build $(BUILD) --models $(DEV_MODELS) --out $(BUILD)/bench-run \
	  --rounds $(BENCH_ROUNDS) --runs $(BENCH_RUNS) --warmup $(BENCH_WARMUP) \
	  --threads $(BENCH_THREADS) $(foreach m,$(BENCH_MODEL),--only $(m))

# Generated kernels (issue 26) against the library's and ONNX Runtime, side by side in one run:
# verisub-run --fusion subop and --fusion library and ORT alternating run by run, at 1 and 2
# threads, on the models made of what users run (a BERT encoder, a GPT-2 decoder with a causal
# mask, ViT-B/16, MobileNet-v3, EfficientNet-B0, ShuffleNet-v2), with steps, bytes through kernels
# and the memory-bound time per run; the table goes into docs/subops.md. About 20 min on 2 cores.
FUSION_MODELS ?= vit_b_16 mobilenet_v3_large efficientnet_b0 shufflenet_v2_x1_0
FUSION_DEV_MODELS ?= bert_encoder gpt_decoder
.PHONY: bench-fusion
bench-fusion: DEV_MODEL = $(FUSION_DEV_MODELS)
bench-fusion: BENCH_ZOO = full
bench-fusion: BENCH_ZOO_MODEL = $(FUSION_MODELS)
bench-fusion: configure dev-models zoo-models ort
	cmake --build $(BUILD) -j $(JOBS) --target verisub-run
	node bench/fusion_bench.js --build $(BUILD) --ort-dir $(BUILD)/ort --threads $(BENCH_THREADS) \
	  --doc docs/subops.md --json $(BUILD)/bench-fusion.json \
	  $(foreach m,$(FUSION_DEV_MODELS),$(DEV_MODELS)/$(m).onnx) $(foreach m,$(FUSION_MODELS),$(ZOO)/$(m).onnx)

# The torchvision classification zoo (issue 23): every classification model of Debian's
# torchvision exported by bench/models/export_zoo.py into $(ZOO) (random weights, batch 1,
# 3x224x224, opset 17; a model PyTorch cannot export is listed in zoo.json with the reason), then
# timed per model at one thread by bench/zoo_bench.js beside ONNX Runtime: ORT on the original and
# on verisub-opt's output, verisub-run, --optimize and bf16, each verisub column with --check.
# Tables go to stdout and into docs/bench-zoo.md (between its markers). BENCH_ZOO=quick (one or two
# models per family, about 15 min on 2 cores) or full (about 2 hours); BENCH_ZOO_MODEL="NAME ..."
# for a few; ZOO_RESUME=1 keeps the models already measured in the output folder and times the
# rest (a full run in parts).
BENCH_ZOO ?= quick
BENCH_ZOO_MODEL ?=
ZOO ?= $(BUILD)/zoo
ZOO_THREADS ?= 1
ZOO_RUNS ?= 5
ZOO_ROUNDS ?= 1
ZOO_RESUME ?=
.PHONY: zoo-models bench-zoo
# Installs Debian's PyTorch stack for the exporters when it is missing ($(1): the target's name).
define install_model_packages
	@/usr/bin/python3 -c 'import torch, torchvision, onnx, numpy' 2>/dev/null || { \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "$(1): installing $(DEV_MODEL_PACKAGES)"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(DEV_MODEL_PACKAGES); }
endef
zoo-models:
	$(call install_model_packages,zoo-models)
	/usr/bin/python3 bench/models/export_zoo.py --out $(ZOO) --tier $(BENCH_ZOO) \
	  $(foreach m,$(BENCH_ZOO_MODEL),--only $(m))
bench-zoo: configure zoo-models ort
	cmake --build $(BUILD) -j $(JOBS) --target verisub-opt verisub-onnx verisub-run
	node bench/zoo_bench.js --build $(BUILD) --zoo $(ZOO) --tier $(BENCH_ZOO) \
	  --out $(BUILD)/bench-zoo --ort-dir $(BUILD)/ort --threads $(ZOO_THREADS) \
	  --runs $(ZOO_RUNS) --rounds $(ZOO_ROUNDS) $(if $(ZOO_RESUME),--resume) \
	  $(foreach m,$(BENCH_ZOO_MODEL),--only $(m))

# Models of other kinds than classification (bench/models/export_other.py into $(OTHER): semantic
# segmentation, video, sequence models with LSTM/GRU, speech and text encoders, diffusion, style
# transfer, super-resolution, detection), timed as the zoo is, with the same floors; tables into
# docs/bench-other.md. About 15 min on 2 cores.
OTHER ?= $(BUILD)/other
.PHONY: other-models bench-other
other-models: configure ort
	$(call install_model_packages,other-models)
	cmake --build $(BUILD) -j $(JOBS) --target verisub-run  # calibrates the QDQ models
	/usr/bin/python3 bench/models/export_other.py --out $(OTHER)
bench-other: configure other-models ort
	cmake --build $(BUILD) -j $(JOBS) --target verisub-opt verisub-onnx verisub-run
	node bench/zoo_bench.js --build $(BUILD) --zoo $(OTHER) --tier quick \
	  --out $(BUILD)/bench-other --ort-dir $(BUILD)/ort --threads $(ZOO_THREADS) \
	  --runs $(ZOO_RUNS) --rounds $(ZOO_ROUNDS) --doc docs/bench-other.md

# Models whose input shapes change from run to run (bench/models/export_dynamic.py into
# $(DYNAMIC): GPT-2 decoding with its key/value cache, BERT over any sequence length, ResNet-50
# over any batch), timed against ONNX Runtime prepared for each shape and with --dynamic-shapes
# (docs/dynamic-shapes.md). About 5 min on 2 cores.
DYNAMIC ?= $(BUILD)/dynamic
.PHONY: dynamic-models bench-dynamic
dynamic-models:
	$(call install_model_packages,dynamic-models)
	/usr/bin/python3 bench/models/export_dynamic.py --out $(DYNAMIC)
bench-dynamic: configure dynamic-models ort
	cmake --build $(BUILD) -j $(JOBS) --target verisub-run
	node bench/dynamic_bench.js --build $(BUILD) --dir $(DYNAMIC) --ort-dir $(BUILD)/ort \
	  --threads $(ZOO_THREADS)

# The shipped cost tables (data/costs/, docs/cost-models.md): every development model optimized
# with costs measured on this CPU at COST_THREADS kernel threads; each run adds what it measured to
# data/costs/<engine>-<version>-<isa>-t<threads>-<cpu>.costs.txt (COST_TABLES_FRESH=1 starts from
# an empty table, to time a measurement from scratch). COST_LAYOUTS=1 also measures what the
# layout DP asks (convolutions and pools per output layout, reorders): verisub-run --layout dp,
# and on CPUs with native bf16 kernels the same in bfloat16 (--precision bf16).
COST_THREADS ?= 1 2
COST_LAYOUTS ?= 1
.PHONY: cost-tables
cost-tables: DEV_MODEL = $(BENCH_MODEL)
cost-tables: configure dev-models
	cmake --build $(BUILD) -j $(JOBS) --target verisub-opt verisub-run
	@if [ -n "$(COST_TABLES_FRESH)" ]; then mkdir -p $(BUILD)/fresh-costs; rm -f $(BUILD)/fresh-costs/*; fi
	@start=$$(date +%s); for t in $(COST_THREADS); do for m in $(DEV_MODELS)/*.onnx; do \
	  echo "== $$m, $$t thread(s)"; \
	  $(BUILD)/rewriter/verisub-opt $$m -o /dev/null --cost cpu-measured --cost-threads $$t \
	    $(if $(COST_TABLES_FRESH),--cost-cache $(BUILD)/fresh-costs,--cost-cache data/costs) \
	    | grep -E '^(costs|cost before|cost after|time):' || exit 1; \
	  [ -n "$(COST_LAYOUTS)" ] || continue; \
	  $(BUILD)/session/verisub-run $$m --layout dp --threads $$t --runs 1 --warmup 0 \
	    $(if $(COST_TABLES_FRESH),--cost-cache $(BUILD)/fresh-costs,--cost-cache data/costs) \
	    | grep -E '^costs:' || exit 1; \
	  out=$$($(BUILD)/session/verisub-run $$m --layout dp --precision bf16 --threads $$t --runs 1 \
	    --warmup 0 $(if $(COST_TABLES_FRESH),--cost-cache $(BUILD)/fresh-costs,--cost-cache data/costs) 2>&1); \
	  echo "$$out" | grep -q 'no native bfloat16' && continue; \
	  echo "$$out" | grep -E '^(costs|precision):' || { echo "$$out" | tail -3; exit 1; }; \
	done; done; echo "cost-tables: $$(( $$(date +%s) - start )) s in all"

# Layout DP benchmark: every model in $(BUILD)/models (written by verisub-models) and DenseNet-121,
# analytic layout costs; states, time, pruned counts, cost all-plain vs DP, gap to exact. Then the
# four settings of issue 16 measured with verisub-run on every development model (rewrites only,
# layouts only, rewrites then layouts, joint; bench/layout_settings.sh), LAYOUT_THREADS threads.
LAYOUT_ROUNDS ?= 2
LAYOUT_RUNS ?= 10
LAYOUT_THREADS ?= 1
.PHONY: bench-layout
bench-layout: DEV_MODEL = $(BENCH_MODEL)
bench-layout: configure dev-models
	cmake --build $(BUILD) -j $(JOBS) --target models verisub-bench-layout verisub-run
	$(BUILD)/rewriter/verisub-bench-layout $(BUILD)/models
	$(BUILD)/rewriter/verisub-bench-layout $(BUILD)/models --precision bf16
	sh bench/layout_settings.sh $(BUILD) $(DEV_MODELS) $(LAYOUT_ROUNDS) $(LAYOUT_RUNS) $(LAYOUT_THREADS)

format:
	find base specs gen verify ruledb rewriter runtime tests -name '*.h' -o -name '*.cc' | xargs clang-format -i

# Generator benchmark, 1 and 2 threads: data/gen/taso.cfg (the shipped database's space) and
# data/gen/taso_full.cfg (TASO's own space). Wall, CPU, peak memory and counts come from the
# generator's own report; the two dumps of each config must be byte-identical, and every rule of
# tests/gen/taso_reference_rules.txt a candidate of taso_full.cfg (taso.cfg misses three, each
# explained in tests/gen/rule_coverage_test.cc).
GEN_FIGURES := '^(threads|graphs visited|distinct fingerprints|buckets|double evaluation|double-equal|pairs in classes|rules kept|candidate rules|time|peak memory|reference rules|missing)'

.PHONY: bench-gen
bench-gen: build
	@for cfg in taso taso_full; do \
	  for t in 1 2; do \
	    echo "== verisub-gen data/gen/$$cfg.cfg, $$t thread(s)"; \
	    $(BUILD)/gen/verisub-gen --config data/gen/$$cfg.cfg --threads $$t --quiet \
	      --candidates $(BUILD)/$${cfg}_candidates_$$t.txt \
	      --reference tests/gen/taso_reference_rules.txt > $(BUILD)/$${cfg}_report_$$t.txt; \
	    rc=$$?; grep -E $(GEN_FIGURES) $(BUILD)/$${cfg}_report_$$t.txt; \
	    if [ $$rc -ne 0 ] && { [ $$rc -ne 3 ] || [ $$cfg = taso_full ]; }; then exit 1; fi; \
	  done; \
	  cmp $(BUILD)/$${cfg}_candidates_1.txt $(BUILD)/$${cfg}_candidates_2.txt || exit 1; \
	  echo "== $$cfg.cfg: candidates of 1 and 2 threads are byte-identical"; \
	done

clean:
	rm -rf $(BUILD)

# Benchmark models (runtime/models): write them all to $(BUILD)/models/, and compare them with
# PyTorch's definitions of the same networks (needs python3-torch, python3-torchvision, python3-onnx).
.PHONY: models models-check
models: configure
	cmake --build $(BUILD) -j $(JOBS) --target models

models-check: models
	/usr/bin/python3 tests/runtime/models/compare_with_pytorch.py $(BUILD)/models

# Fuzzing (tests/README.md): every reader of user files under libFuzzer with ASan and UBSan,
# FUZZ_SECONDS each, built with clang in $(FUZZ_BUILD); new corpus entries go to
# $(FUZZ_BUILD)/corpus/TARGET, crashes to $(FUZZ_BUILD)/crashes/TARGET (copy one into
# tests/fuzz/corpus/TARGET once fixed: `make test` replays it). Then the rewriter's differential
# fuzzing: DIFF_FUZZ_GRAPHS random graphs with the shipped rules (normal build) on
# DIFF_FUZZ_THREADS threads (0: one per core), a progress line per round and a summary;
# failures written to $(BUILD)/diff-fuzz-failures as ONNX models (docs/hardening.md).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := onnx_import rules_proto rules_text gen_config graph_text cost_table
DIFF_FUZZ_GRAPHS ?= 10000
DIFF_FUZZ_THREADS ?= 0
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev
.PHONY: fuzz
fuzz: configure
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(FUZZ_PACKAGES)"
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_CXX_COMPILER=clang++-14 -DVERISUB_FUZZ=ON \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crashes/$$t; \
	  echo "== fuzz_$$t, $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -rss_limit_mb=4096 -max_len=65536 -timeout=20 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t/ $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
	    > $(FUZZ_BUILD)/fuzz_$$t.log 2>&1; rc=$$?; \
	  grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)' \
	    $(FUZZ_BUILD)/fuzz_$$t.log; \
	  if [ $$rc -ne 0 ]; then tail -40 $(FUZZ_BUILD)/fuzz_$$t.log; exit 1; fi; \
	done
	cmake --build $(BUILD) -j $(JOBS) --target rewriter_diff_fuzz
	mkdir -p $(BUILD)/diff-fuzz-failures
	$(BUILD)/tests/rewriter/rewriter_diff_fuzz --graphs $(DIFF_FUZZ_GRAPHS) \
	  --threads $(DIFF_FUZZ_THREADS) --failures $(BUILD)/diff-fuzz-failures
