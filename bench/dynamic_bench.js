#!/usr/bin/env node
// Models whose input shapes change from run to run (bench/models/export_dynamic.py: a GPT-2
// decoder with its key/value cache, BERT over any sequence length, ResNet-50 over any batch),
// timed side by side at each case's shapes: ONNX Runtime, verisub-run prepared for those shapes
// (what a shape seen often gets), and verisub-run --dynamic-shapes (one preparation for every
// shape: what a new shape gets, a decoder's every step). Each column a serving process, single
// runs alternating between them, every ratio a median of per-run ratios. The prepare line of the
// static column says what preparing a new shape costs.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const bench = require('./run_bench');
const {cli} = require('./cli');

const REPO = path.resolve(__dirname, '..');
const ORT_BENCH = path.join(REPO, 'bench', 'ort', 'ort_bench.js');
const USAGE = `usage: node bench/dynamic_bench.js [--dir DIR] [--build DIR] [--ort-dir DIR]
       [--threads N] [--runs N] [--rounds N] [--only SUBSTRING]... [--no-check] [--cpus LIST]
  --dir      the folder export_dynamic.py wrote (default build/dynamic), its cases.json
  --runs     timed runs per column and round (default 10); --rounds (default 2)
  --only     cases whose name contains this (repeatable)
  --no-check skip --check of the verisub columns (on by default, first round)
${bench.CPUS_USAGE}`;

function parseArgs(argv) {
  const {fail, count, walk} = cli('dynamic_bench', USAGE);
  const o = {dir: path.join(REPO, 'build', 'dynamic'), build: path.join(REPO, 'build'),
             ortDir: path.join(REPO, 'build', 'ort'), threads: 1, runs: 10, rounds: 2, only: [],
             check: true, cpus: 'last'};
  walk(argv, (a, next) => {
    if (a === '--dir') o.dir = next();
    else if (a === '--build') o.build = next();
    else if (a === '--ort-dir') o.ortDir = next();
    else if (a === '--threads') o.threads = count(a, next(), 1);
    else if (a === '--runs') o.runs = count(a, next(), 1);
    else if (a === '--rounds') o.rounds = count(a, next(), 1);
    else if (a === '--only') o.only.push(next());
    else if (a === '--no-check') o.check = false;
    else if (a === '--cpus') o.cpus = bench.cpusArg(next(), fail);
    else return false;
    return true;
  });
  if (!fs.existsSync(path.join(o.dir, 'cases.json')))
    fail(`${o.dir}/cases.json not found: run bench/models/export_dynamic.py --out ${o.dir}`);
  return o;
}

// One case, o.rounds rounds: the three columns' times, the paired ratios, the check lines and
// the static column's prepare time.
async function timeCase(o, verisubRun, c) {
  const model = path.join(o.dir, c.model);
  const files = c.inputs.map((f) => path.join(o.dir, f));
  const shapes = Object.entries(c.shapes).flatMap(([n, d]) => ['--input-shape', `${n}=${d}`]);
  const served = ['--threads', String(o.threads), '--runs', '1', '--warmup', '3', '--serve'];
  const inputs = files.flatMap((f) => ['--input', f]);
  const args = {
    ort: [ORT_BENCH, model, ...shapes, ...served, '--ort-dir', o.ortDir],
    static: [model, ...inputs, ...served],
    dynamic: [model, ...inputs, '--dynamic-shapes', ...served]
  };
  const turns = Object.keys(args);
  const times = {ort: [], static: [], dynamic: []};
  const ratios = {static: [], dynamic: []};
  const out = {checks: {}, prepare: {}, errors: {}};
  const cpus = bench.pinCpus(o, o.threads);
  for (let round = 0; round < o.rounds; ++round) {
    const servers = {}, up = {};
    for (const who of turns) {
      const extra = who !== 'ort' && o.check && round === 0 ? ['--check'] : [];
      servers[who] = new bench.Server(who === 'ort' ? process.execPath : verisubRun,
                                      [...args[who], ...extra], 1800, cpus);
      up[who] = await servers[who].next().then(() => true, () => false);
    }
    const got = {ort: [], static: [], dynamic: []};
    for (let k = 0; k < o.runs && turns.every((w) => up[w]); ++k) {
      const shift = (k + round) % turns.length;
      for (const who of [...turns.slice(shift), ...turns.slice(0, shift)]) {
        try {
          got[who].push((await servers[who].run(1))[0]);
        } catch (e) {
          up[who] = false;
        }
      }
    }
    const ends = await Promise.all(turns.map((w) => servers[w].close()));
    turns.forEach((who, i) => {
      const end = ends[i];
      if (!end.ok) out.errors[who] = end.error;
      const check = /^check: +(.*)$/m.exec(end.stdout);
      if (check) out.checks[who] = check[1];
      const prepare = /^prepare: +([0-9.]+) ms/m.exec(end.stdout);
      if (prepare && round === 0) out.prepare[who] = Number(prepare[1]);
    });
    const n = Math.min(...turns.map((w) => got[w].length));
    for (let k = 0; k < n; ++k)
      for (const who of ['static', 'dynamic']) ratios[who].push(got.ort[k] / got[who][k]);
    for (const who of turns) times[who].push(...got[who].slice(0, n));
  }
  const m = (xs) => (xs.length ? bench.median(xs) : NaN);
  out.ms = Object.fromEntries(turns.map((w) => [w, m(times[w])]));
  out.vsOrt = {static: m(ratios.static), dynamic: m(ratios.dynamic)};
  out.pairs = ratios.static.length;
  return out;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const verisubRun = bench.findVerisubRun(o.build);
  const manifest = JSON.parse(fs.readFileSync(path.join(o.dir, 'cases.json'), 'utf8'));
  const cases = Object.values(manifest.models)
                    .flatMap((m) => m.cases)
                    .filter((c) => !o.only.length || o.only.some((s) => c.name.includes(s)));
  const started = new Date();
  const rows = [];
  for (const [i, c] of cases.entries()) {
    console.error(`[${i + 1}/${cases.length}] ${c.name}`);
    const r = await timeCase(o, verisubRun, c);
    rows.push({name: c.name, ...r});
    const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');
    console.error(`    ORT ${f(r.ms.ort)} ms, static ${f(r.ms.static)} ms (${f(r.vsOrt.static)}x), ` +
                  `dynamic ${f(r.ms.dynamic)} ms (${f(r.vsOrt.dynamic)}x)` +
                  Object.entries(r.errors).map(([w, e]) => `; ${w}: ${e}`).join(''));
  }
  const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  console.log(`\nMeasured ${started.toISOString()} (node bench/dynamic_bench.js, ${o.threads} ` +
              `thread(s), ${o.rounds} round(s) x ${o.runs} runs per column, ${os.cpus().length} ` +
              `cores ${os.cpus()[0].model.trim()}, ${bench.pinnedNote({...o, threads: [o.threads]})}).\n`);
  console.log('| case | ORT ms | verisub static ms | static vs ORT | verisub dynamic ms | ' +
              'dynamic vs ORT | static prepare s (a new shape) | dynamic prepare s | check |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const check = ['static', 'dynamic']
                      .map((w) => `${w}: ${r.errors[w] ? 'FAILED to run' :
                                        r.checks[w] ? (/^ok/.test(r.checks[w]) ? 'ok' : 'FAILED') :
                                                      '-'}`)
                      .join(', ');
    console.log(`| ${r.name} | ${f(r.ms.ort)} | ${f(r.ms.static)} | ${f(r.vsOrt.static)}x | ` +
                `${f(r.ms.dynamic)} | ${f(r.vsOrt.dynamic)}x | ${f(r.prepare.static / 1e3, 1)} | ` +
                `${f(r.prepare.dynamic / 1e3, 1)} | ${check} |`);
  }
  console.log('\nRatios: medians of per-run ratios, ONNX Runtime over the column, the three ' +
              'columns alternating run by run in their own processes; timings on a shared ' +
              'machine drift by up to 40% between hours, the ratios far less.');
}

main().catch((e) => {
  console.error(`dynamic_bench: ${e.stack || e}`);
  process.exit(1);
});
