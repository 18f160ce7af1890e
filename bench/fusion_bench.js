#!/usr/bin/env node
// Generated kernels against the library's (`make bench-fusion`): per model and thread count,
// verisub-run --fusion subop (every cluster generated) and --fusion auto (the kernels that timed
// faster than the library's steps at prepare) against --fusion library, and each against ONNX
// Runtime, every run of one column paired with a run of the others (serving processes
// alternating run by run, the order rotating each pass: drift on this shared host falls on all
// alike), plus from one
// profile of each: kernel steps, megabytes read and written by the steps of a run, and the
// memory-bound time (every step but convolutions and matmuls, in the run). Both verisub columns
// run in the layout DP's layouts (--layout dp): the default policy times the DP's against
// oneDNN's own at prepare and may keep either, a coin toss between processes that would blur
// what the kernels change. Prints a table; with
// --doc, writes it into that Markdown file between the fusion-bench markers.
'use strict';

const fs = require('fs');
const path = require('path');
const bench = require('./run_bench');

const USAGE = `usage: fusion_bench.js --build DIR --ort-dir DIR [--threads 1,2] [--runs N]
                       [--rounds R] [--fusions library,subop,auto] [--doc FILE] [--json FILE]
                       [--settle-ms N] [--profiles P] [--cpus LIST|last|none] MODEL.onnx...
  --build    the build folder (its session/verisub-run)
  --ort-dir  onnxruntime-node's folder (make ort)
  --threads  thread counts, comma-separated (default 1,2)
  --runs     timed runs per column and round (default 10)
  --rounds   rounds (default 2; each starts the processes anew)
  --fusions  the verisub-run columns, the first the baseline (default library,subop,auto)
  --doc      a Markdown file whose <!-- fusion-bench --> section gets the table
  --json     write the measurements here
  --profiles profiles of each column, alternating; the memory-bound time is their median
             (default 3)
  --settle-ms  idle milliseconds before each timed run, so that the threads of the process that
             ran last stop spinning (default 20 at more than one thread, 0 at one)
${bench.CPUS_USAGE}`;

const {fail, count, walk} = require('./cli').cli('fusion_bench', USAGE);
const ORT_BENCH = path.join(__dirname, 'ort', 'ort_bench.js');
const kLibraryKinds = /^(conv2d|conv2d_bias|matmul|onnx:(Conv|MatMul|Gemm|ConvTranspose))$/;

function parseArgs(argv) {
  const o = {threads: [1, 2], runs: 10, rounds: 2, fusions: ['library', 'subop', 'auto'], models: [],
             cpus: 'last', profiles: 3};
  walk(argv, (a, next) => {
    if (a === '--build') o.build = next();
    else if (a === '--ort-dir') o.ortDir = next();
    else if (a === '--threads') o.threads = next().split(',').map((t) => count('--threads', t, 1));
    else if (a === '--runs') o.runs = count(a, next(), 1);
    else if (a === '--rounds') o.rounds = count(a, next(), 1);
    else if (a === '--fusions') o.fusions = next().split(',');
    else if (a === '--doc') o.doc = next();
    else if (a === '--json') o.json = next();
    else if (a === '--cpus') o.cpus = bench.cpusArg(next(), fail);
    else if (a === '--settle-ms') o.settleMs = count(a, next(), 0);
    else if (a === '--profiles') o.profiles = count(a, next(), 1);
    else if (a.startsWith('--')) return false;
    else o.models.push(a);
    return true;
  });
  if (!o.build || !o.ortDir || !o.models.length) fail(`--build, --ort-dir and a model needed\n${USAGE}`);
  return o;
}

// One profiled, checked run of `fusion`: steps, MB through kernels, memory-bound ms, generated
// kernels and whether the check passed.
// `check`: compare with the reference backend too (once per model: its kernels are slow).
function profile(verisubRun, model, threads, fusion, check) {
  const r = bench.run(verisubRun, [model, '--threads', String(threads), '--runs', '3',
                                   '--layout', 'dp', '--fusion', fusion, ...(check ? ['--check'] : []),
                                   '--profile', '5', '--profile-top', '0'], 1800);
  const out = r.stdout;
  const p = {ok: r.ok, error: r.error};
  const prep = /^prepare: .*threads \d+: (\d+) steps.* ([0-9.]+) MB through kernels per run/m.exec(out);
  if (prep) {
    p.steps = Number(prep[1]);
    p.ioMB = Number(prep[2]);
  }
  const fus = /^fusion: +\w+: (\d+) generated kernels for (\d+) nodes \((\d+) compiled, (\d+) from/m.exec(out);
  if (fus) [p.generated, p.generatedNodes, p.compiled, p.cacheHits] = fus.slice(1).map(Number);
  p.check = (/^check: +(\w+)/m.exec(out) || [])[1] || (check ? 'none' : '-');
  p.memoryMs = 0;
  p.libraryMs = 0;
  const table = out.split('\n').filter((l) => /^  \S.* +[0-9.]+ +[0-9.]+ +[0-9.]+% +\d+ +\d+$/.test(l));
  for (const line of table) {
    const f = line.trim().split(/\s+/);
    const kind = f[0], inRun = Number(f[1]);
    if (kLibraryKinds.test(kind)) p.libraryMs += inRun;
    else p.memoryMs += inRun;
  }
  return p;
}

// Milliseconds of idle time before each timed run: --settle-ms, else 20 at more than one thread.
function settleMs(o, threads) {
  return o.settleMs !== undefined ? o.settleMs : threads > 1 ? 20 : 0;
}

async function timeModel(verisubRun, o, model, threads) {
  const served = ['--threads', String(threads), '--runs', '1', '--warmup', '3', '--serve'];
  const turns = ['ort', ...o.fusions];
  const base = o.fusions[0];
  const times = Object.fromEntries(turns.map((w) => [w, []]));
  const vsOrt = Object.fromEntries(o.fusions.map((f) => [f, []]));
  const vsBase = Object.fromEntries(o.fusions.map((f) => [f, []]));
  const cpus = bench.pinCpus(o, threads);
  for (let round = 0; round < o.rounds; ++round) {
    const servers = {
      ort: new bench.Server(process.execPath, [ORT_BENCH, model, ...served, '--ort-dir', o.ortDir], 1800,
                            cpus)
    };
    const up = {ort: await servers.ort.next().then(() => true, () => false)};
    for (const f of o.fusions) {
      servers[f] = new bench.Server(verisubRun, [model, '--layout', 'dp', '--fusion', f, ...served],
                                    1800, cpus);
      up[f] = await servers[f].next().then(() => true, () => false);
    }
    const got = Object.fromEntries(turns.map((w) => [w, []]));
    for (let k = 0; k < o.runs && Object.values(up).every((u) => u); ++k) {
      const shift = (k + round) % turns.length;
      for (const who of [...turns.slice(shift), ...turns.slice(0, shift)]) {
        // Let the last process's threads stop spinning first (OpenMP's and ONNX Runtime's spin
        // after a parallel region: on two cores they took half the machine from the next run).
        if (settleMs(o, threads) > 0) await new Promise((r) => setTimeout(r, settleMs(o, threads)));
        try {
          got[who].push((await servers[who].run(1))[0]);
        } catch (e) {
          up[who] = false;
        }
      }
    }
    await Promise.all(Object.values(servers).map((sv) => sv.close()));
    const n = Math.min(...turns.map((w) => got[w].length));
    for (let k = 0; k < n; ++k)
      for (const f of o.fusions) {
        vsOrt[f].push(got.ort[k] / got[f][k]);
        vsBase[f].push(got[base][k] / got[f][k]);
      }
    for (const who of turns) times[who].push(...got[who]);
  }
  const m = (xs) => (xs.length ? bench.median(xs) : NaN);
  const out = {ms: {}, vsOrt: {}, vsBase: {}, pairs: vsOrt[base].length};
  for (const w of turns) out.ms[w] = m(times[w]);
  for (const f of o.fusions) {
    out.vsOrt[f] = m(vsOrt[f]);
    out.vsBase[f] = m(vsBase[f]);
  }
  return out;
}

function table(rows, o) {
  const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  const base = o.fusions[0], others = o.fusions.slice(1);
  const arrow = (r, key, d) => o.fusions.map((c) => f(r.profiles[c][key], d)).join(' → ');
  const lines = [
    `| model | threads | ORT ms | ${o.fusions.map((c) => `${c} ms`).join(' | ')} | ` +
        `${others.map((c) => `${c} vs ${base}`).join(' | ')} | ` +
        `${o.fusions.map((c) => `${c} vs ORT`).join(' | ')} | steps | MB through kernels | ` +
        `memory-bound ms | ${others.map((c) => `memory-bound gain ${c}`).join(' | ')} | ` +
        `generated kernels (nodes) | check |`,
    `|---|---:|---:|${o.fusions.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|` +
        `${o.fusions.map(() => '---:').join('|')}|---:|---:|---:|${others.map(() => '---:').join('|')}|---:|---|`];
  for (const r of rows) {
    const t = r.time, p = r.profiles;
    lines.push(
        `| ${r.model} | ${r.threads} | ${f(t.ms.ort)} | ${o.fusions.map((c) => f(t.ms[c])).join(' | ')} | ` +
        `${others.map((c) => `**${f(t.vsBase[c])}x**`).join(' | ')} | ` +
        `${o.fusions.map((c) => `${f(t.vsOrt[c])}x`).join(' | ')} | ${arrow(r, 'steps', 0)} | ` +
        `${arrow(r, 'ioMB', 1)} | ${arrow(r, 'memoryMs')} | ` +
        `${others.map((c) => `${f(p[base].memoryMs / p[c].memoryMs)}x`).join(' | ')} | ` +
        `${others.map((c) => `${p[c].generated} (${p[c].generatedNodes})`).join(', ')} | ` +
        `${o.fusions.map((c) => p[c].check).join('/')} |`);
  }
  lines.push('', `Paired ratios: medians over ${o.rounds} rounds x ${o.runs} runs of per-run ratios ` +
             `(${o.fusions.length + 1} serving processes alternating run by run); above 1 the second engine ` +
             `named is faster; every verisub column with --layout dp. Columns with arrows: ` +
             `${o.fusions.join(' → ')}. Memory-bound ms: every profiled step but convolutions and ` +
             `matmuls, timed in the run (the median of ${o.profiles} profiles of 5 runs per column, ` +
             `the columns alternating; noisier than the paired ratios). Timed runs start after ` +
             `${settleMs(o, 2)} ms idle at more than one thread (${settleMs(o, 1)} at one), so that ` +
             `the last process's threads stop spinning. Check: every column against the reference ` +
             `backend, at the first thread count.`);
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const verisubRun = bench.findVerisubRun(o.build);
  if (!verisubRun) fail(`no verisub-run under ${o.build}`);
  const rows = [];
  const start = Date.now();
  for (const model of o.models) {
    for (const threads of o.threads) {
      const name = path.basename(model, '.onnx');
      process.stderr.write(`[${rows.length + 1}/${o.models.length * o.threads.length}] ${name} ` +
                           `at ${threads} thread(s) (${((Date.now() - start) / 60000).toFixed(1)} min)\n`);
      const check = threads === o.threads[0];
      // Each column profiled o.profiles times, the columns alternating; its memory-bound time is
      // the median of those (one process's profile drifts with the machine as much as the
      // kernels differ).
      const profiles = {};
      const memory = Object.fromEntries(o.fusions.map((c) => [c, []]));
      for (let k = 0; k < o.profiles; ++k)
        for (const c of o.fusions) {
          const p = profile(verisubRun, model, threads, c, check && k === 0);
          if (k === 0) profiles[c] = p;
          memory[c].push(p.memoryMs);
        }
      for (const c of o.fusions) profiles[c].memoryMs = bench.median(memory[c]);
      const time = await timeModel(verisubRun, o, model, threads);
      rows.push({model: name, threads, profiles, time});
      const said = o.fusions.slice(1).map(
          (c) => `${c} ${time.vsBase[c].toFixed(2)}x ${o.fusions[0]} (memory-bound ` +
                 `${profiles[o.fusions[0]].memoryMs.toFixed(2)} -> ${profiles[c].memoryMs.toFixed(2)} ms)`);
      process.stderr.write(`    ${said.join(', ')}; check ` +
                           `${o.fusions.map((c) => profiles[c].check).join('/')}\n`);
    }
  }
  const text = table(rows, o);
  console.log(text);
  if (o.json) fs.writeFileSync(o.json, JSON.stringify(rows, null, 1));
  if (o.doc) {
    const doc = fs.readFileSync(o.doc, 'utf8');
    const begin = '<!-- fusion-bench -->', end = '<!-- /fusion-bench -->';
    const a = doc.indexOf(begin), b = doc.indexOf(end);
    if (a < 0 || b < a) fail(`${o.doc} has no ${begin} ... ${end} section`);
    const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
    fs.writeFileSync(o.doc, doc.slice(0, a + begin.length) +
                                `\nMeasured ${when} UTC (\`node bench/fusion_bench.js\`).\n\n${text}\n` +
                                doc.slice(b));
  }
  process.stderr.write(`fusion_bench: ${rows.length} rows in ${((Date.now() - start) / 60000).toFixed(1)} min\n`);
}

main().catch((e) => fail(e.stack || String(e)));
