#!/usr/bin/env node
// Times ONNX Runtime's CPU engine (onnxruntime-node, highest graph optimization level) on one or
// more models, side by side, or runs a model once on recorded inputs and dumps its outputs.
'use strict';

const path = require('path');
const {readTensorFile, writeTensorFile, compareTensors} = require('./onnx_proto');

const REPO = path.resolve(__dirname, '..', '..');
const USAGE = `usage:
  node bench/ort/ort_bench.js MODEL.onnx [MODEL2.onnx ...] [--threads N] [--runs R] [--warmup W]
       [--seed S] [--input-shape NAME=d0,d1,...] [--ort-dir DIR] [--spin] [--profile K] [--serve]
    Times every model on random inputs (fixed seed), the models' runs alternating
    (A B A B ...) so that drift of a shared machine hits all alike. One line per model:
      ort-bench: median_ms=<float> min_ms=<float> runs=<int> threads=<int>
                 times_ms=<float>,... model=<path>
    (the k-th times of all models were taken one right after the other: paired samples)
    --profile K: also ONNX Runtime's own profile of the timed runs (its profiler on, which
    costs a little per node), per model: the time per run of each operator type and of the K
    slowest nodes (0: every node), each node's median over the runs, to set beside
    verisub-run --profile:
      ort-profile: op=<type> us=<float> nodes=<int> model=<path>
      ort-profile: node=<name> op=<type> us=<float> model=<path>
  node bench/ort/ort_bench.js MODEL.onnx --input IN.pb [--input IN2.pb ...]
       [--dump-outputs PREFIX] [--expect OUT.pb ...] [--threads N]
    Runs once on recorded inputs (ONNX TensorProto, in the order of the model's inputs);
    writes PREFIX.output_<i>.pb and prints the largest differences from the --expect tensors.
  --serve: after the warm-up, print 'serve: ready' and answer each 'run [W]' line on stdin with
    W untimed runs and one timed run of each model in turn, 'serve: ms=<float>,...' (the timed
    runs, in the models' order); at the end of stdin the ort-bench lines cover the served runs
    (a bench keeps ONNX Runtime prepared beside another engine and alternates between them:
    paired samples across processes, each warm after the other engine's run)
  --spin: let ONNX Runtime's idle intra-op workers spin (its default; off here because the
    sessions of the alternating models would take the cores from each other)
  --ort-dir: where onnxruntime-node is installed (default build/ort; make ort installs it)`;

function fail(message, code = 2) {
  console.error(`ort_bench: ${message}`);
  process.exit(code);
}

function parseArgs(argv) {
  const opts = {
    models: [],
    threads: 1,
    runs: 20,
    warmup: 5,
    seed: 1,
    shapes: {},
    inputs: [],
    expect: [],
    dumpPrefix: null,
    spin: false,
    profile: null,
    serve: false,
    ortDir: path.join(REPO, 'build', 'ort')
  };
  const count = (name, v, min) => {
    if (v === undefined || !/^\d+$/.test(v) || Number(v) < min)
      fail(`${name} needs an integer >= ${min}\n${USAGE}`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (a === '--threads')
      opts.threads = count(a, next(), 1);
    else if (a === '--runs')
      opts.runs = count(a, next(), 1);
    else if (a === '--warmup')
      opts.warmup = count(a, next(), 0);
    else if (a === '--seed')
      opts.seed = count(a, next(), 0);
    else if (a === '--input')
      opts.inputs.push(next());
    else if (a === '--expect')
      opts.expect.push(next());
    else if (a === '--dump-outputs')
      opts.dumpPrefix = next();
    else if (a === '--spin')
      opts.spin = true;
    else if (a === '--serve')
      opts.serve = true;
    else if (a === '--profile')
      opts.profile = count(a, next(), 0);
    else if (a === '--ort-dir')
      opts.ortDir = path.resolve(next());
    else if (a === '--input-shape') {
      const m = /^([^=]+)=(\d+(?:,\d+)*)$/.exec(next());
      if (!m) fail(`--input-shape needs NAME=d0,d1,...\n${USAGE}`);
      opts.shapes[m[1]] = m[2].split(',').map(Number);
    } else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a.startsWith('-'))
      fail(`unknown argument '${a}'\n${USAGE}`);
    else
      opts.models.push(a);
  }
  if (opts.models.length === 0) fail(USAGE);
  if (opts.inputs.length > 0 && opts.models.length !== 1) fail('--input runs exactly one model');
  return opts;
}

function loadOrt(ortDir) {
  const modulePath = path.join(ortDir, 'node_modules', 'onnxruntime-node');
  try {
    return require(modulePath);
  } catch (e) {
    fail(
        `cannot load onnxruntime-node from ${modulePath} (${e.message.split('\n')[0]}); ` +
            'install it with `make ort`',
        1);
  }
}

// mulberry32: a small seeded generator, so every run draws the same inputs.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// IEEE half-precision bits of `v` (|v| <= 1 here: normal or subnormal, rounded to nearest).
function halfBits(v) {
  const f = new Float32Array([v]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000, exp = ((u >>> 23) & 0xff) - 127 + 15, mant = u & 0x7fffff;
  if (exp <= 0) {  // subnormal or zero
    if (exp < -10) return sign;
    const m = (mant | 0x800000) >>> (1 - exp);
    return sign | ((m + 0x1000) >>> 13);
  }
  return sign | ((exp << 10) + ((mant + 0x1000) >>> 13));
}

function randomTensor(ort, meta, dims, next) {
  const n = dims.reduce((a, b) => a * b, 1);
  switch (meta.type) {
    case 'float32':
      return new ort.Tensor('float32', Float32Array.from({length: n}, () => next() * 2 - 1), dims);
    case 'float64':
      return new ort.Tensor('float64', Float64Array.from({length: n}, () => next() * 2 - 1), dims);
    case 'int32':
      return new ort.Tensor(
          'int32', Int32Array.from({length: n}, () => Math.floor(next() * 100)), dims);
    case 'int64':
      return new ort.Tensor(
          'int64', BigInt64Array.from({length: n}, () => BigInt(Math.floor(next() * 100))), dims);
    case 'bool':
      return new ort.Tensor(
          'bool', Uint8Array.from({length: n}, () => (next() < 0.5 ? 1 : 0)), dims);
    case 'float16':  // half bits of uniform values in [-1, 1)
      return new ort.Tensor('float16', Uint16Array.from({length: n}, () => halfBits(next() * 2 - 1)),
                            dims);
    default:
      fail(`input '${meta.name}' has type ${meta.type}, which random inputs do not cover`, 1);
  }
}

function randomFeeds(ort, session, opts) {
  const next = rng(opts.seed);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    let dims = opts.shapes[meta.name];
    if (!dims) {
      if (!meta.shape.every((d) => typeof d === 'number' && d >= 0))
        fail(
            `input '${meta.name}' has symbolic shape [${meta.shape}]; give --input-shape ` +
                `${meta.name}=d0,d1,...`,
            1);
      dims = meta.shape;
    }
    feeds[meta.name] = randomTensor(ort, meta, dims, next);
  }
  return feeds;
}

// Several sessions live in this process (the columns alternate run by run). ONNX Runtime's
// intra-op workers spin after each parallel section by default: with two sessions of two threads
// on a two-core machine, the idle session's spinning workers take the cores from the running one
// (measured: ORT at 2 threads slower than at 1). Spinning is therefore off unless --spin is given.
async function createSession(ort, model, threads, spin, profilePrefix) {
  try {
    return await ort.InferenceSession.create(model, {
      graphOptimizationLevel: 'all',
      ...(profilePrefix ? {enableProfiling: true, profileFilePrefix: profilePrefix} : {}),
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 3,
      extra: {session: {intra_op: {allow_spinning: spin ? '1' : '0'}}},
    });
  } catch (e) {
    fail(`${model}: ${e.message}`, 1);
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// ONNX Runtime's profile (a Chrome trace it writes when the session ends profiling) of one
// model, summarized: every node's median kernel time over the runs, summed per operator type,
// and the `top` slowest nodes.
function printProfile(file, model, top, runs) {
  const fs = require('fs');
  const perNode = new Map();  // name -> {op, durs}
  for (const e of JSON.parse(fs.readFileSync(file, 'utf8'))) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !e.args) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!perNode.has(name)) perNode.set(name, {op: e.args.op_name, durs: []});
    perNode.get(name).durs.push(e.dur);
  }
  const nodes = [...perNode.entries()].map(([name, n]) => ({
    name, op: n.op, us: median(n.durs.slice(-runs))  // the timed runs, not the warm-ups
  }));
  const ops = new Map();
  for (const n of nodes) {
    const o = ops.get(n.op) || {us: 0, count: 0};
    o.us += n.us;
    ++o.count;
    ops.set(n.op, o);
  }
  for (const [op, o] of [...ops.entries()].sort((x, y) => y[1].us - x[1].us))
    console.log(`ort-profile: op=${op} us=${o.us.toFixed(1)} nodes=${o.count} model=${model}`);
  nodes.sort((x, y) => y.us - x.us);
  for (const n of top ? nodes.slice(0, top) : nodes)
    console.log(`ort-profile: node=${n.name} op=${n.op} us=${n.us.toFixed(1)} model=${model}`);
  fs.unlinkSync(file);
}

async function timeModels(ort, opts) {
  const sessions = [];
  const os = require('os');
  for (const [i, model] of opts.models.entries()) {
    const prefix = opts.profile === null ? null :
        path.join(os.tmpdir(), `ort-bench-${process.pid}-${i}`);
    const session = await createSession(ort, model, opts.threads, opts.spin, prefix);
    sessions.push({model, session, prefix, feeds: randomFeeds(ort, session, opts), times: []});
  }
  for (let w = 0; w < opts.warmup; ++w)
    for (const s of sessions) await s.session.run(s.feeds);
  const runEach = async (warm = 0) => {
    for (const s of sessions) {
      for (let w = 0; w < warm; ++w) await s.session.run(s.feeds);
      const start = process.hrtime.bigint();
      await s.session.run(s.feeds);
      s.times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  if (opts.serve)
    await serve(runEach, () => sessions.map((s) => s.times[s.times.length - 1]));
  else
    for (let r = 0; r < opts.runs; ++r) await runEach();
  for (const s of sessions) {
    console.log(
        `ort-bench: median_ms=${median(s.times).toFixed(3)} ` +
        `min_ms=${Math.min(...s.times).toFixed(3)} runs=${s.times.length} ` +
        `threads=${opts.threads} times_ms=${s.times.map((t) => t.toFixed(3)).join(',')} ` +
        `model=${s.model}`);
  }
  if (opts.profile === null) return;
  const fs = require('fs');
  for (const s of sessions) {
    // endProfiling writes the trace as PREFIX_<date and time>.json (it returns nothing).
    s.session.endProfiling();
    const base = path.basename(s.prefix);
    const file = fs.readdirSync(path.dirname(s.prefix)).find((f) => f.startsWith(`${base}_`));
    if (!file) fail(`${s.model}: ONNX Runtime wrote no profile beside ${s.prefix}`, 1);
    printProfile(path.join(path.dirname(s.prefix), file), s.model, opts.profile, opts.runs);
  }
}

// --serve: per 'run [W]' line on stdin, W untimed runs and one timed run of every model, the
// timed runs' times on one line, until the end of stdin. Any other line is an error (exit 2).
async function serve(runEach, lastTimes) {
  const readline = require('readline');
  process.stdout.write('serve: ready\n');
  const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of lines) {
    const m = /^run(?: (\d+))?$/.exec(line.trim());
    if (!m) fail(`--serve: unknown command '${line}' (only 'run [W]')`);
    await runEach(m[1] ? Number(m[1]) : 0);
    process.stdout.write(`serve: ms=${lastTimes().map((t) => t.toFixed(3)).join(',')}\n`);
  }
}

async function runRecorded(ort, opts) {
  const model = opts.models[0];
  const session = await createSession(ort, model, opts.threads);
  if (opts.inputs.length !== session.inputNames.length)
    fail(`${model} has ${session.inputNames.length} input(s), ${opts.inputs.length} given`, 1);
  const feeds = {};
  session.inputMetadata.forEach((meta, i) => {
    const t = readTensorFile(opts.inputs[i]);
    feeds[meta.name] = new ort.Tensor(t.type, t.data, t.dims);
  });
  const results = await session.run(feeds);
  let worst = 0;
  session.outputNames.forEach((name, i) => {
    const out = results[name];
    const tensor = {name, type: out.type, dims: out.dims.map(Number), data: out.data};
    if (opts.dumpPrefix) writeTensorFile(`${opts.dumpPrefix}.output_${i}.pb`, tensor);
    if (i < opts.expect.length) {
      const d = compareTensors(tensor, readTensorFile(opts.expect[i]));
      if (d.error) fail(`output ${i} '${name}': ${d.error}`, 1);
      worst = Math.max(worst, d.maxRel);
      console.log(
          `ort-bench: output=${i} max_abs=${d.maxAbs.toExponential(3)} ` +
          `max_rel=${d.maxRel.toExponential(3)} name=${name}`);
    }
  });
  return worst;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const ort = loadOrt(opts.ortDir);
  if (opts.inputs.length > 0)
    await runRecorded(ort, opts);
  else
    await timeModels(ort, opts);
}

main().catch((e) => fail(e.stack || String(e), 1));
