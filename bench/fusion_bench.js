#!/usr/bin/env node
// Generated kernels against the library's (`make bench-fusion`): per model and thread count,
// verisub-run --fusion subop against --fusion library and both against ONNX Runtime, every run of
// one column paired with a run of the others (three serving processes alternating run by run, the
// order rotating each pass: drift on this shared host falls on all alike), plus from one
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
                       [--rounds R] [--doc FILE] [--json FILE] MODEL.onnx...
  --build    the build folder (its session/verisub-run)
  --ort-dir  onnxruntime-node's folder (make ort)
  --threads  thread counts, comma-separated (default 1,2)
  --runs     timed runs per column and round (default 10)
  --rounds   rounds (default 2; each starts the three processes anew)
  --doc      a Markdown file whose <!-- fusion-bench --> section gets the table
  --json     write the measurements here`;

const {fail, count, walk} = require('./cli').cli('fusion_bench', USAGE);
const ORT_BENCH = path.join(__dirname, 'ort', 'ort_bench.js');
const kLibraryKinds = /^(conv2d|conv2d_bias|matmul|onnx:(Conv|MatMul|Gemm|ConvTranspose))$/;

function parseArgs(argv) {
  const o = {threads: [1, 2], runs: 10, rounds: 2, models: []};
  walk(argv, (a, next) => {
    if (a === '--build') o.build = next();
    else if (a === '--ort-dir') o.ortDir = next();
    else if (a === '--threads') o.threads = next().split(',').map((t) => count('--threads', t, 1));
    else if (a === '--runs') o.runs = count(a, next(), 1);
    else if (a === '--rounds') o.rounds = count(a, next(), 1);
    else if (a === '--doc') o.doc = next();
    else if (a === '--json') o.json = next();
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

async function timeModel(verisubRun, o, model, threads) {
  const served = ['--threads', String(threads), '--runs', '1', '--warmup', '3', '--serve'];
  const times = {ort: [], library: [], subop: []};
  const pairs = {library: [], subop: [], gain: []};
  for (let round = 0; round < o.rounds; ++round) {
    const ort = new bench.Server(process.execPath,
                                 [ORT_BENCH, model, ...served, '--ort-dir', o.ortDir], 1800);
    const up = {ort: await ort.next().then(() => true, () => false)};
    const servers = {};
    for (const f of ['library', 'subop']) {
      servers[f] = new bench.Server(verisubRun, [model, '--layout', 'dp', '--fusion', f, ...served],
                                    1800);
      up[f] = await servers[f].next().then(() => true, () => false);
    }
    const turns = ['ort', 'library', 'subop'];
    const got = {ort: [], library: [], subop: []};
    for (let k = 0; k < o.runs && Object.values(up).every((u) => u); ++k) {
      const shift = (k + round) % turns.length;
      for (const who of [...turns.slice(shift), ...turns.slice(0, shift)]) {
        try {
          got[who].push((await (who === 'ort' ? ort : servers[who]).run(1))[0]);
        } catch (e) {
          up[who] = false;
        }
      }
    }
    await Promise.all([ort.close(), servers.library.close(), servers.subop.close()]);
    const n = Math.min(got.ort.length, got.library.length, got.subop.length);
    for (let k = 0; k < n; ++k) {
      pairs.library.push(got.ort[k] / got.library[k]);
      pairs.subop.push(got.ort[k] / got.subop[k]);
      pairs.gain.push(got.library[k] / got.subop[k]);
    }
    for (const who of turns) times[who].push(...got[who]);
  }
  const m = (xs) => (xs.length ? bench.median(xs) : NaN);
  return {
    ortMs: m(times.ort), libraryMs: m(times.library), subopMs: m(times.subop),
    libraryVsOrt: m(pairs.library), subopVsOrt: m(pairs.subop), gain: m(pairs.gain),
    pairs: pairs.gain.length
  };
}

function table(rows, o) {
  const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  const lines = [
    `| model | threads | ORT ms | library ms | subop ms | subop vs library | library vs ORT | ` +
        `subop vs ORT | steps (lib → subop) | MB through kernels | memory-bound ms | ` +
        `memory-bound gain | generated kernels (nodes) | check |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|'];
  for (const r of rows) {
    const lib = r.library, sub = r.subop, t = r.time;
    lines.push(`| ${r.model} | ${r.threads} | ${f(t.ortMs)} | ${f(t.libraryMs)} | ${f(t.subopMs)} | ` +
               `**${f(t.gain)}x** | ${f(t.libraryVsOrt)}x | ${f(t.subopVsOrt)}x | ` +
               `${lib.steps} → ${sub.steps} | ${f(lib.ioMB, 1)} → ${f(sub.ioMB, 1)} | ` +
               `${f(lib.memoryMs)} → ${f(sub.memoryMs)} | ${f(lib.memoryMs / sub.memoryMs)}x | ` +
               `${sub.generated} (${sub.generatedNodes}) | ${lib.check}/${sub.check} |`);
  }
  lines.push('', `Paired ratios: medians over ${o.rounds} rounds x ${o.runs} runs of per-run ratios ` +
             `(three serving processes alternating run by run); above 1 the second engine named ` +
             `is faster; both verisub columns with --layout dp. Memory-bound ms: every profiled step but convolutions and matmuls, ` +
             `timed in the run (one profile of 5 runs per column, so noisier than the paired ` +
             `ratios). Check: both columns against the reference backend, at the first thread count.`);
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
      const library = profile(verisubRun, model, threads, 'library', check);
      const subop = profile(verisubRun, model, threads, 'subop', check);
      const time = await timeModel(verisubRun, o, model, threads);
      rows.push({model: name, threads, library, subop, time});
      process.stderr.write(`    subop ${time.gain.toFixed(2)}x library, ${time.subopVsOrt.toFixed(2)}x ` +
                           `ORT; memory-bound ${library.memoryMs.toFixed(2)} -> ` +
                           `${subop.memoryMs.toFixed(2)} ms; check ${library.check}/${subop.check}\n`);
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
