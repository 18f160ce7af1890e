#!/usr/bin/env node
// make bench-run: every development model, side by side in one run, against ONNX Runtime.
// Columns: (a) ONNX Runtime at its highest optimization level on the original model, (b) the
// same on verisub-opt's output, (c) verisub-run, (d) verisub-run --optimize, (e) verisub-run with
// bfloat16 where the layout DP picks it (CPUs with native bf16 kernels); at each thread
// count. Repetitions alternate (a b c d a b c d ...), so drift of a shared machine hits every
// column alike; only the ratios to (a) mean something across runs.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawn, spawnSync} = require('child_process');
const {countOnnxNodes, readTensorFile, compareTensors} = require('./ort/onnx_proto');

const REPO = path.resolve(__dirname, '..');
const ORT_BENCH = path.join(__dirname, 'ort', 'ort_bench.js');
const kMaxRuns = 40;
const CPUS_USAGE =
    `  --cpus    the CPUs every timed process runs on (taskset -c LIST), the same for all engines
            so none is timed on a core the others never see; last: the last T CPUs at T
            threads (none at 0 threads or as many as there are); none: wherever the OS puts
            them (default last)`;  // timed runs per column and round, at most (--pair-seconds)
const USAGE =
    `usage: node bench/run_bench.js [--models DIR] [--build DIR] [--out DIR] [--only NAME]...
       [--threads 1,2] [--rounds K] [--runs R] [--pair-seconds S] [--warmup W] [--rules R]
       [--ort-dir DIR] [--pause-file F] [--cpus LIST|last|none]
  --models  exported models, NAME.onnx with NAME.input_0.pb (default build/devmodels;
            make dev-models writes them)
  --build   the CMake build folder holding rewriter/verisub-opt, runtime/verisub-onnx and,
            when built, verisub-run (default build)
  --out     where optimized models, outputs and bench-run.json go (default build/bench-run)
  --rounds  alternations of the columns; each round runs every column R times after W
            warm-up runs (default 3 rounds, 5 runs, 2 warm-up)
  --pair-seconds S  more runs than R on small models, until ONNX Runtime's timed runs of the
            original total S seconds per round (at most ${kMaxRuns}; default 1)
  --pause-file F  while F exists, hold before the next timed run or prepare and write F.paused
            (so work that must not overlap the timings can wait for it; remove F to go on)
${CPUS_USAGE}`;

const {fail, count, walk} = require('./cli').cli('run_bench', USAGE);

function parseArgs(argv) {
  const o = {
    models: path.join(REPO, 'build', 'devmodels'),
    build: path.join(REPO, 'build'),
    out: path.join(REPO, 'build', 'bench-run'),
    only: [],
    threads: [1, 2],
    rounds: 3,
    runs: 5,
    pairSeconds: 1,
    warmup: 2,
    rules: null,
    ortDir: path.join(REPO, 'build', 'ort'),
    pauseFile: null,
    cpus: 'last'
  };
  walk(argv, (a, next) => {
    if (a === '--models')
      o.models = path.resolve(next());
    else if (a === '--build')
      o.build = path.resolve(next());
    else if (a === '--out')
      o.out = path.resolve(next());
    else if (a === '--only')
      o.only.push(next());
    else if (a === '--rules')
      o.rules = path.resolve(next());
    else if (a === '--ort-dir')
      o.ortDir = path.resolve(next());
    else if (a === '--pause-file')
      o.pauseFile = path.resolve(next());
    else if (a === '--cpus')
      o.cpus = cpusArg(next(), fail);
    else if (a === '--rounds')
      o.rounds = count(a, next(), 1);
    else if (a === '--runs')
      o.runs = count(a, next(), 1);
    else if (a === '--pair-seconds') {
      o.pairSeconds = Number(next());
      if (!(o.pairSeconds >= 0 && o.pairSeconds <= 600))
        fail(`--pair-seconds needs a number of seconds in [0, 600]\n${USAGE}`);
    } else if (a === '--warmup')
      o.warmup = count(a, next(), 0);
    else if (a === '--threads') {
      const v = next();
      if (!/^\d+(,\d+)*$/.test(v)) fail(`--threads needs a list like 1,2\n${USAGE}`);
      o.threads = v.split(',').map(Number);
    } else
      return false;
    return true;
  });
  return o;
}

// Runs a program; returns {ok, stdout, stderr, error (one line), seconds}.
function run(cmd, args, timeoutS) {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 64 << 20});
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const stdout = r.stdout || '', stderr = r.stderr || '';
  let error = null;
  if (r.error)
    error = r.error.code === 'ETIMEDOUT' ? `timed out after ${timeoutS} s` : r.error.message;
  else if (r.status !== 0) {
    const lines = (stderr.trim() || stdout.trim()).split('\n');
    error = `exit ${r.status === null ? r.signal : r.status}: ${lines[lines.length - 1]}`;
  }
  return {ok: error === null, stdout, stderr, error, seconds};
}

// While o.pauseFile exists, waits (and says so in pauseFile.paused), so that a build or test on
// this 2-core machine can run between timed runs instead of beside them (--pause-file).
async function holdWhilePaused(o) {
  if (!o.pauseFile || !fs.existsSync(o.pauseFile)) return;
  const ack = `${o.pauseFile}.paused`;
  fs.writeFileSync(ack, `${new Date().toISOString()}\n`);
  console.error(`    paused while ${o.pauseFile} exists`);
  while (fs.existsSync(o.pauseFile)) await new Promise((done) => setTimeout(done, 2000));
  fs.rmSync(ack, {force: true});
  console.error('    resumed');
}

// A benchmark program kept running between timed runs (verisub-run --serve, ort_bench.js
// --serve): once prepared and warm it prints 'serve: ready', then answers each 'run' written to
// its stdin with one 'serve: ms=<t>[,<t>...]' line; closing stdin ends it. Two servers let a
// bench alternate single runs of two engines in two processes, so drift slower than one run
// cancels in the per-run ratios, as it does for two models in one process.
class Server {
  // `cpus`: a taskset CPU list the server runs on (pinCpus), or null.
  constructor(cmd, args, timeoutS, cpus = null) {
    this.stdout = '';
    this.stderr = '';
    this.replies = [];   // 'serve:' lines not asked for yet
    this.waiter = null;  // {resolve, reject} of the pending next()
    this.done = false;
    this.start = process.hrtime.bigint();
    this.child = cpus ? spawn('taskset', ['-c', cpus, cmd, ...args], {stdio: ['pipe', 'pipe', 'pipe']})
                      : spawn(cmd, args, {stdio: ['pipe', 'pipe', 'pipe']});
    this.child.stdin.on('error', () => {});  // a server that died: reported by its exit
    let partial = '';
    this.child.stdout.on('data', (d) => {
      this.stdout += d;
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop();
      for (const l of lines)
        if (l.startsWith('serve: ')) this.replies.push(l.slice(7));
      this.wake();
    });
    this.child.stderr.on('data', (d) => (this.stderr += d));
    this.exited = new Promise((resolve) => {
      const end = (status, signal, message) => {
        if (this.done) return;
        this.done = true;
        this.status = status;
        this.signal = signal;
        this.message = message;
        clearTimeout(this.timer);
        this.wake();
        resolve();
      };
      this.child.on('error', (e) => end(null, null, e.message));
      this.child.on('close', (status, signal) => end(status, signal, null));
    });
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.child.kill('SIGKILL');
    }, timeoutS * 1000);
  }
  wake() {
    if (!this.waiter) return;
    const w = this.waiter;
    if (this.replies.length) {
      this.waiter = null;
      w.resolve(this.replies.shift());
    } else if (this.done) {
      this.waiter = null;
      w.reject(new Error(this.error() || 'exit 0 before replying'));
    }
  }
  next() {
    return new Promise((resolve, reject) => {
      this.waiter = {resolve, reject};
      this.wake();
    });
  }
  // `warm` untimed runs and one timed run of the served model(s): the timed runs' ms.
  async run(warm = 0) {
    this.child.stdin.write(`run ${warm}\n`);
    const reply = await this.next();
    const m = /^ms=([0-9.,eE+-]+)$/.exec(reply);
    if (!m) throw new Error(`unexpected reply 'serve: ${reply}'`);
    return m[1].split(',').map(Number);
  }
  error() {
    if (this.timedOut) return 'timed out';
    if (this.message) return this.message;
    if (this.status === 0) return null;
    const lines = (this.stderr.trim() || this.stdout.trim()).split('\n');
    return `exit ${this.status === null ? this.signal : this.status}: ${lines[lines.length - 1]}`;
  }
  // Ends the server; the same fields as run() returns.
  async close() {
    this.child.stdin.end();
    await this.exited;
    const error = this.error();
    return {
      ok: error === null,
      stdout: this.stdout,
      stderr: this.stderr,
      error,
      seconds: Number(process.hrtime.bigint() - this.start) / 1e9
    };
  }
}

// The value of --cpus: last, none, or a taskset list such as 1 or 0-3,6.
function cpusArg(v, fail) {
  if (v === 'last' || v === 'none' || /^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(v)) return v;
  fail("--cpus needs last, none or a CPU list like 1 or 0-3 (see --help)");
}

let tasksetChecked = null;  // whether taskset runs here, asked once

// The CPU list the timed processes of one model at `threads` threads run on (o.cpus), or null
// for anywhere. Engines served side by side were otherwise each kept by the scheduler on a core
// of its own for its whole life: on a shared host one core can be 10-30% slower than the other
// for minutes (another tenant on its sibling thread), and that core's engine then read slower
// in every run of the round.
function pinCpus(o, threads) {
  const v = o.cpus || 'last';
  if (v === 'none') return null;
  if (tasksetChecked === null) {
    tasksetChecked = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
    if (!tasksetChecked) console.error('    taskset does not run here: timed processes are not pinned');
  }
  if (!tasksetChecked) return null;
  if (v !== 'last') return v;
  const n = os.cpus().length;
  if (threads <= 0 || threads >= n) return null;
  return threads === 1 ? String(n - 1) : `${n - threads}-${n - 1}`;
}

// How the timed processes were placed, for the reports: at each thread count timed.
function pinnedNote(o) {
  const at = o.threads.map((t) => [t, pinCpus(o, t)]);
  if (at.every(([, c]) => !c)) return 'timed processes not pinned';
  return 'timed processes pinned together (taskset -c) ' +
      at.map(([t, c]) => `at ${t} thread(s) to ${c ? `CPU ${c}` : 'none'}`).join(', ');
}

function findVerisubRun(build) {
  for (const dir of ['session', 'rewriter', 'runtime', 'bench', '.']) {
    const p = path.join(build, dir, 'verisub-run');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch (e) { /* not there */
    }
  }
  return null;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// The import summary verisub-onnx prints: nodes and opaque nodes after import and folding.
function importSummary(o, model) {
  const r = run(path.join(o.build, 'runtime', 'verisub-onnx'), [model], 600);
  if (!r.ok) return {error: r.error};
  const field = (name) => {
    const m = new RegExp(`^${name}: (\\d+)$`, 'm').exec(r.stdout);
    return m ? Number(m[1]) : null;
  };
  // Op counts follow as '  <op> <count>'; ONNX operators kept opaque are named 'onnx:<Op>'.
  const opaqueOps = [...r.stdout.matchAll(/^ +onnx:(\S+) +(\d+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
  // 'opaque: N of M nodes (x%): Type n, ...' (runtime/opaque_stats.h).
  const opaque = /^opaque: (\d+) of \d+ nodes/m.exec(r.stdout);
  return {nodes: field('nodes'), opaque: opaque ? Number(opaque[1]) : null, opaqueOps,
          seconds: r.seconds};
}

function optimize(o, name, model) {
  const out = path.join(o.out, `${name}.verisub.onnx`);
  const report = path.join(o.out, `${name}.report.json`);
  fs.rmSync(out, {force: true});
  const args = [model, '-o', out, '--report', report];
  if (o.rules) args.push('--rules', o.rules);
  const r = run(path.join(o.build, 'rewriter', 'verisub-opt'), args, 900);
  if (!r.ok) return {error: r.error};
  const j = JSON.parse(fs.readFileSync(report, 'utf8'));
  return {
    path: out,
    costBefore: j.cost_before_us,
    costAfter: j.cost_after_us,
    nodesBefore: j.nodes_before,
    nodesAfter: j.nodes_after,
    steps: j.rewrite_steps,
    stop: j.stop_reason,
    seconds: r.seconds
  };
}

// ORT on the recorded input: the original against PyTorch, verisub-opt's output against the
// original's ORT output.
function checkOutputs(o, name, model, opt) {
  const input = path.join(o.models, `${name}.input_0.pb`);
  const expected = path.join(o.models, `${name}.output_0.pb`);
  if (!fs.existsSync(input)) return {error: `no recorded input ${input}`};
  const origPrefix = path.join(o.out, `${name}.ort`);
  const args =
      [ORT_BENCH, model, '--input', input, '--dump-outputs', origPrefix, '--ort-dir', o.ortDir];
  if (fs.existsSync(expected)) args.push('--expect', expected);
  const r = run(process.execPath, args, 600);
  if (!r.ok) return {error: `ORT on the original: ${r.error}`};
  const result = {};
  const m = /max_abs=(\S+) max_rel=(\S+)/.exec(r.stdout);
  if (m) result.vsTorch = {maxAbs: Number(m[1]), maxRel: Number(m[2])};
  if (opt.path) {
    const optPrefix = path.join(o.out, `${name}.verisub.ort`);
    const q = run(
        process.execPath,
        [ORT_BENCH, opt.path, '--input', input, '--dump-outputs', optPrefix, '--ort-dir', o.ortDir],
        600);
    if (!q.ok) return {...result, error: `ORT on verisub-opt's output: ${q.error}`};
    const d = compareTensors(
        readTensorFile(`${optPrefix}.output_0.pb`), readTensorFile(`${origPrefix}.output_0.pb`));
    if (d.error) return {...result, error: d.error};
    result.optVsOrig = d;
  }
  return result;
}

// One thread count: K rounds. Every round times all columns by single runs alternating between
// processes that keep their models prepared (--serve): an ONNX Runtime process with (a) and (b),
// and verisub-run processes for (c) and (d) (one phase), then for (e) (a second phase: fewer
// copies of a large model in memory at once); the phases' order rotates per round, and so do the
// processes' turns and which of (a) and (b) runs first. Each timed run follows an untimed one of
// the same model, and every column's run k has a run of (a) right before or after it: the
// per-run ratios (a)/(c), (a)/(d) and (a)/(e) give cPaired, dPaired and ePaired, as (b)/(a)
// gives pairedRatio, and their medians cancel drift slower than one run. `--optimize` against
// without is measured inside the (d) process (--compare-unoptimized: both sessions prepared
// there and timed in alternating pairs of rounds at startup, the copy without prepared first in
// every other round): dcPaired, the median over rounds;
// (c)/(d) across the two processes is kept as dcServed (two processes' memory placement and
// timed choices differ: 0.93-1.0 on models no rule rewrites, where in one process it is 0.98-1.0).
// A column's own figure is the median of its round medians.
// With o.check, the first round of every verisub-run column also compares its outputs with the
// reference backend's on the model as imported; the column keeps the 'check:' line, and a failed
// check (exit 3) still yields the timing. The reference runs once per model (verisub-run
// --backend reference --output), every column checks against what it wrote (--check-against):
// on large models it is slower than all the timed runs together.
// `confirm(result)`, when given, is asked once after o.rounds rounds with the figures so far and
// returns how many rounds more to time (in new processes, pooled with the others).
async function timeModel(o, model, opt, verisubRun, threads, confirm = null) {
  const timeoutS = o.timeoutS || 900;
  const columns = {a: [], b: [], c: [], d: [], e: []};
  const errors = {}, checks = {}, precisionErrors = {};
  let checkArgs = ['--check'];
  if (o.check && verisubRun) {
    const dir = path.join(o.out, `${path.basename(model, '.onnx')}.reference`);
    fs.rmSync(dir, {recursive: true, force: true});
    fs.mkdirSync(dir, {recursive: true});
    const r = run(verisubRun, [model, '--backend', 'reference', '--runs', '1', '--warmup', '0',
                               '--output', dir], timeoutS);
    if (r.ok) checkArgs = ['--check-against', dir];  // else each column runs the reference itself
  }
  const pairs = {b: [], c: [], d: [], e: [], dc: []};
  const served = ['--threads', String(threads), '--runs', '1', '--warmup', String(o.warmup),
                  '--serve'];
  const extraArgs = {
    c: [],
    d: ['--optimize', '--compare-unoptimized'],
    // What a user asking for bfloat16 gets: the default layout policy (auto), which keeps bf16 in
    // the DP's layouts only where it times faster than float32 in the DP's and oneDNN's own.
    e: ['--precision', 'bf16']
  };
  const compared = [];  // (d)'s in-process --optimize vs without, one per round
  const phases = verisubRun ? [['c', 'd'], ['e']] : [[]];
  // A verisub-run column's first round checks its outputs; the column keeps the 'check:' line.
  const checkLine = (key, r) => {
    const line = /^check: +(.*)$/m.exec(r.stdout);
    checks[key] = line ? line[1] : (r.error || 'no check line');
    if (r.error && /^exit 3:/.test(r.error)) r.checkFailed = true;  // timed; the check failed
  };
  const cpus = pinCpus(o, threads);
  const timePhase = async (keys, round) => {
    await holdWhilePaused(o);  // the servers' prepares time kernels too
    const models = opt.path ? [model, opt.path] : [model];
    if (round % 2) models.reverse();
    const ort = new Server(process.execPath,
                           [ORT_BENCH, ...models, ...served, '--ort-dir', o.ortDir], timeoutS, cpus);
    // One after the other: verisub-run's prepare times its layout choices, which another
    // process's warm-up on the other core would disturb.
    const up = {ort: await ort.next().then(() => true, () => false)};
    const servers = {};
    for (const key of keys.filter((k) => !errors[k])) {
      // The choices timed at prepare are remembered per run of the bench (as a user's second
      // load remembers its first): every round of a model runs what its first prepare chose.
      const args = [model, ...extraArgs[key], ...served,
                    '--decisions', path.join(o.out, 'decisions')];
      if (o.rules && key !== 'c') args.push('--rules', o.rules);
      if (o.check && round === 0) args.push(...checkArgs);
      // Which of (d)'s two copies is prepared first alternates by round: in one process, where
      // each lies in memory can put a large model's copies a few per cent apart.
      if (key === 'd' && round % 2) args.push('--compare-unoptimized-first');
      servers[key] = new Server(verisubRun, args, timeoutS, cpus);
      up[key] = await servers[key].next().then(() => true, () => false);
    }
    const turns = ['ort', ...Object.keys(servers)];
    const times = {a: [], b: [], c: [], d: [], e: []};
    // At least o.runs runs each; on small models more, until ONNX Runtime's timed runs of the
    // original total o.pairSeconds (their per-run ratios are the noisiest: a run of a few ms
    // moves by 10-20% on this shared host), at most kMaxRuns.
    const more = () => up.ort && times.a.length < kMaxRuns &&
        times.a.reduce((sum, t) => sum + t, 0) < 1000 * (o.pairSeconds || 0);
    let done = 0;  // passes made
    const anyUp = () => Object.values(up).some((u) => u);
    for (let k = 0; anyUp() && (k < o.runs || more()); k = ++done) {
      await holdWhilePaused(o);
      const shift = (k + round) % turns.length;
      for (const who of [...turns.slice(shift), ...turns.slice(0, shift)]) {
        if (!up[who]) continue;
        try {
          if (who === 'ort') {
            const ms = await ort.run(1);
            models.forEach((m, i) => times[m === model ? 'a' : 'b'].push(ms[i]));
          } else {
            times[who].push((await servers[who].run(1))[0]);
          }
        } catch (e) {
          up[who] = false;  // a server that died mid-way: its close() below says why
        }
      }
    }
    const ends = await Promise.all([ort.close(), ...Object.values(servers).map((s) => s.close())]);
    const ortEnd = ends[0];
    const ortOk = ortEnd.ok && times.a.length === done && done >= o.runs;
    if (!ortOk) {
      errors.a = errors.b = ortEnd.error || 'ONNX Runtime stopped serving';
    } else {
      for (const key of ['a', 'b']) {
        if (!times[key].length) continue;
        columns[key].push({median: median(times[key]), min: Math.min(...times[key])});
      }
      if (times.b.length === done) times.a.forEach((t, k) => pairs.b.push(times.b[k] / t));
    }
    Object.keys(servers).forEach((key, i) => {
      const end = ends[i + 1];
      if (o.check && round === 0) checkLine(key, end);
      if (key === 'e' && /no native bfloat16 kernels/.test(end.stdout + end.stderr)) {
        errors.e = 'na';  // this CPU has no bf16 kernels: the column does not apply
        return;
      }
      if ((!end.ok && !end.checkFailed) || times[key].length < done || done < o.runs) {
        errors[key] = end.error || 'verisub-run stopped serving';
        return;
      }
      const compare = /^compare: .* speedup=([0-9.eE+-]+)/m.exec(end.stdout);
      if (key === 'd' && compare) compared.push(Number(compare[1]));
      const precision = /^precision: .* output error ([0-9.eE+-]+)/m.exec(end.stdout);
      if (precision && !(key in precisionErrors)) precisionErrors[key] = Number(precision[1]);
      columns[key].push({median: median(times[key]), min: Math.min(...times[key])});
      if (ortOk) times.a.forEach((t, k) => pairs[key].push(t / times[key][k]));
    });
    if (times.c.length === done && times.d.length === done && done && !errors.c && !errors.d)
      times.c.forEach((t, k) => pairs.dc.push(t / times.d[k]));
  };
  let rounds = o.rounds;
  for (let round = 0; round < rounds; ++round) {
    const order = round % 2 ? [...phases].reverse() : phases;
    for (const keys of order) await timePhase(keys, round);
    if (round === rounds - 1 && confirm) {
      rounds += confirm(summarize());
      confirm = null;
    }
  }
  return summarize();

  function summarize() {
    const result = {rounds};
    const summary = (xs) => {
      const s = [...xs].sort((x, y) => x - y);
      return {
        median: median(xs),
        q1: s[Math.floor((s.length - 1) / 4)],
        q3: s[Math.ceil((3 * (s.length - 1)) / 4)],
        n: xs.length
      };
    };
    // (b)/(a): above 1, ORT runs verisub-opt's output slower than the original.
    if (pairs.b.length) result.pairedRatio = summary(pairs.b);
    // (a)/(c), (a)/(d), (a)/(e): above 1, that verisub-run column is faster than ORT; (c)/(d):
    // above 1, --optimize is faster than without.
    for (const [key, name] of [['c', 'cPaired'], ['d', 'dPaired'], ['e', 'ePaired'],
                               ['dc', 'dcServed']])
      if (pairs[key].length) result[name] = summary(pairs[key]);
    if (compared.length) result.dcPaired = summary(compared);
    for (const key of Object.keys(columns)) {
      if (errors[key] === 'na')
        result[key] = {na: true};
      else if (errors[key])
        result[key] = {error: errors[key]};
      else if (columns[key].length)
        result[key] = {
          median: median(columns[key].map((x) => x.median)),
          min: Math.min(...columns[key].map((x) => x.min)),
          outputError: key in precisionErrors ? precisionErrors[key] : null,
          check: checks[key]
        };
      else if (key === 'b')
        result[key] = {error: opt.error ? 'verisub-opt failed' : 'no result'};
      else
        result[key] = {na: true};
    }
    return result;
  }
}

function cell(col, base) {
  if (!col || col.na) return 'n/a';
  if (col.error) return 'error';
  const ratio = base && base.median ? ` (${(col.median / base.median).toFixed(2)})` : '';
  return `${col.median.toFixed(2)}${ratio}`;
}

const pad = (s, n) => String(s).padEnd(n);
const padl = (s, n) => String(s).padStart(n);
const exp = (x) => (x === undefined ? '-' : x.toExponential(1));

function printTables(o, results, verisubRun, load) {
  console.log(
      `\n== bench-run ${new Date().toISOString()}: ${o.rounds} rounds x ${o.runs} runs ` +
      `(${o.warmup} warm-up) per column, columns alternating; verisub-run: ` +
      `${verisubRun || 'not built (n/a)'}`);
  console.log(
      `   machine: ${os.cpus().length} cores (${os.cpus()[0].model.trim()}), load average ` +
      `${load.start.toFixed(1)} at start, ${load.end.toFixed(1)} at end; ` +
      pinnedNote(o));
  console.log(
      '   medians in ms; (ratio) = column median / ORT original median, below 1 is faster;\n' +
      '   paired = median of per-run ratios (b)/(a), each pair run back to back, with quartiles;\n' +
      '   (e) = verisub-run --precision bf16: values in bfloat16 where the DP finds it faster and\n' +
      '   the model times faster so than in float32 (the DP\'s and oneDNN\'s own layouts), output\n' +
      '   error within 1e-2 (relative norm; n/a: no bf16 kernels on this CPU)');
  const head = [
    pad('model', 20), padl('threads', 7), padl('(a) ORT orig', 14), padl('(b) ORT verisub-opt', 20),
    padl('(c) verisub-run', 18), padl('(d) verisub-run --opt', 22), padl('(e) bf16', 16),
    padl('(b)/(a) paired [q1-q3]', 24)
  ].join(' ');
  console.log(head);
  for (const r of results) {
    for (const t of o.threads) {
      const c = r.timings[t] || {};
      console.log([
        pad(r.name, 20), padl(t, 7), padl(cell(c.a), 14), padl(cell(c.b, c.a), 20),
        padl(cell(c.c, c.a), 18), padl(cell(c.d, c.a), 22), padl(cell(c.e, c.a), 16),
        padl(
            c.pairedRatio ? `${c.pairedRatio.median.toFixed(2)} [${c.pairedRatio.q1.toFixed(2)}-` +
                    `${c.pairedRatio.q3.toFixed(2)}]` :
                            '-',
            24)
      ].join(' '));
    }
  }
  console.log('\n   paired speed-ups, median of per-run ratios (above 1: faster): (a)/(c), (a)/(d), ' +
              '(a)/(e) against ORT on the original, (c)/(d) --optimize against without');
  for (const r of results) {
    for (const t of o.threads) {
      const c = r.timings[t] || {};
      const p = (x) => (x ? x.median.toFixed(2) : '-');
      console.log(`   ${pad(r.name, 20)} ${padl(t, 7)}  verisub-run ${p(c.cPaired)}, --optimize ` +
                  `${p(c.dPaired)}, bf16 ${p(c.ePaired)}; --optimize vs without ${p(c.dcPaired)}`);
    }
  }
  console.log(
      '\n   import and rewrite (cost under verisub-opt\'s default model: cpu-measured, us); output ' +
      'checks on the recorded input: ORT(orig) vs PyTorch, ORT(verisub-opt) vs ORT(orig), ' +
      'max abs / max abs relative to max |reference|');
  console.log([
    pad('model', 20), padl('onnx nodes', 10), padl('imported', 9), padl('opaque', 7),
    padl('cost before', 12), padl('cost after', 11), padl('steps', 6), padl('opt s', 6),
    padl('vs torch', 17), padl('opt vs orig', 17), ' opaque ops'
  ].join(' '));
  for (const r of results) {
    const imp = r.import || {}, opt = r.opt || {}, chk = r.check || {};
    const pair = (d) => (d ? `${exp(d.maxAbs)}/${exp(d.maxRel)}` : '-');
    console.log([
      pad(r.name, 20), padl(r.onnxNodes, 10), padl(imp.error ? 'FAILED' : imp.nodes, 9),
      padl(imp.error ? '-' : imp.opaque, 7),
      padl(opt.error ? 'FAILED' : opt.costBefore.toFixed(1), 12),
      padl(opt.error ? '-' : opt.costAfter.toFixed(1), 11), padl(opt.error ? '-' : opt.steps, 6),
      padl(opt.error ? '-' : opt.seconds.toFixed(1), 6), padl(pair(chk.vsTorch), 17),
      padl(pair(chk.optVsOrig), 17),
      ' ' + (imp.opaqueOps && imp.opaqueOps.length ? imp.opaqueOps.join(', ') : '-')
    ].join(' '));
  }
  const notes = [];
  for (const r of results) {
    if (r.import && r.import.error) notes.push(`${r.name}: verisub-onnx: ${r.import.error}`);
    if (r.opt && r.opt.error) notes.push(`${r.name}: verisub-opt: ${r.opt.error}`);
    if (r.check && r.check.error) notes.push(`${r.name}: output check: ${r.check.error}`);
    for (const t of o.threads) {
      for (const [key, label] of [
               ['a', 'ORT'], ['c', 'verisub-run'], ['d', 'verisub-run --optimize'],
               ['e', 'verisub-run --precision bf16']]) {
        const col = (r.timings[t] || {})[key];
        if (col && col.error) notes.push(`${r.name}, ${t} thread(s): ${label}: ${col.error}`);
      }
    }
  }
  const errs = [];
  for (const r of results)
    for (const t of o.threads) {
      const e = (r.timings[t] || {}).e;
      if (e && e.outputError !== undefined && e.outputError !== null)
        errs.push(`${r.name} (${t} thr): ${e.outputError.toExponential(1)}`);
    }
  if (errs.length)
    console.log('\n   (e) output error vs float32 (relative norm): ' + errs.join(', '));
  if (notes.length) console.log('\n   errors:\n' + notes.map((n) => `   ${n}`).join('\n'));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  for (const tool of [['rewriter', 'verisub-opt'], ['runtime', 'verisub-onnx']]) {
    if (!fs.existsSync(path.join(o.build, ...tool)))
      fail(`${path.join(o.build, ...tool)} is not built (cmake --build build --target ${tool[1]})`);
  }
  let names;
  try {
    names = fs.readdirSync(o.models).filter((f) => f.endsWith('.onnx')).map((f) => f.slice(0, -5));
  } catch (e) {
    fail(`cannot read ${o.models} (${e.code}); make dev-models writes the models`);
  }
  names = names.sort().filter((n) => o.only.length === 0 || o.only.includes(n));
  if (names.length === 0) fail(`no models to run in ${o.models}`);
  fs.mkdirSync(o.out, {recursive: true});
  const verisubRun = findVerisubRun(o.build);
  const results = [];
  const load = {start: os.loadavg()[0]};
  for (const name of names) {
    const model = path.join(o.models, `${name}.onnx`);
    console.error(`-- ${name}: import, verisub-opt, output check`);
    const r = {name, onnxNodes: countOnnxNodes(model), timings: {}};
    r.import = importSummary(o, model);
    r.opt = optimize(o, name, model);
    r.check = checkOutputs(o, name, model, r.opt);
    for (const t of o.threads) {
      console.error(`-- ${name}: timing, ${t} thread(s)`);
      r.timings[t] = await timeModel(o, model, r.opt, verisubRun, t);
    }
    results.push(r);
  }
  load.end = os.loadavg()[0];
  printTables(o, results, verisubRun, load);
  const json = path.join(o.out, 'bench-run.json');
  fs.writeFileSync(
      json,
      JSON.stringify(
          {date: new Date().toISOString(), options: o, load, verisubRun, results}, null, 1));
  console.log(`\n   figures: ${json}`);
}

module.exports = {
  run, findVerisubRun, median, importSummary, optimize, checkOutputs, timeModel, Server,
  holdWhilePaused, cpusArg, pinCpus, pinnedNote, CPUS_USAGE
};

if (require.main === module)
  main().catch((e) => {
    console.error(`run_bench: ${e.stack || e}`);
    process.exit(1);
  });
