#!/usr/bin/env node
// make bench-zoo: the torchvision classification zoo (bench/models/export_zoo.py) side by side
// with ONNX Runtime, per model at one thread (issue 23). Columns as make bench-run's
// (run_bench.js): (a) ORT on the original, (b) ORT on verisub-opt's output, (c) verisub-run,
// (d) verisub-run --optimize, (e) bf16; every verisub column runs --check in its first round.
// Speed ratios are ORT-original's median over the column's (above 1: faster than ONNX Runtime);
// per model, per family (geometric mean and worst) and over the zoo. The tables are printed and
// written into a Markdown file between two marker lines, so the hand-written analysis around
// them stays.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const {countOnnxNodes} = require('./ort/onnx_proto');
const bench = require('./run_bench');

const REPO = path.resolve(__dirname, '..');
const BEGIN = '<!-- bench-zoo:begin (written by bench/zoo_bench.js) -->';
const END = '<!-- bench-zoo:end -->';
const USAGE =
    `usage: node bench/zoo_bench.js [--zoo DIR] [--tier quick|full] [--only NAME]... [--build DIR]
       [--out DIR] [--threads N] [--rounds K] [--confirm K] [--runs R] [--pair-seconds S] [--warmup W]
       [--doc FILE|none] [--resume [--report-only]] [--pause-file F] [--cpus LIST|last|none]
  --runs, --pair-seconds  at least R timed runs of each column per round, more on small models
           until ONNX Runtime's runs of the original total S seconds (at most 40; default 5, 1)
  --confirm K  a model below a floor after its rounds gets K rounds more in new processes,
           pooled with the first (a process that ran slow for its whole life, as one in tens
           does on this shared host, no longer decides a model alone; default 2, 0 for none)
  --zoo    exported zoo with zoo.json (default build/zoo; make bench-zoo exports it)
  --tier   quick: one or two models per family (zoo.json's "quick"); full: every model
  --resume keep the models already measured in OUT/bench-zoo.json with the same settings and
           time only the others (the full zoo takes hours: it can be run in parts; each model's
           columns are still measured side by side in one part)
  --report-only  with --resume: time nothing, write the tables of the models measured so far
  --doc    Markdown file whose marked section receives the tables (default docs/bench-zoo.md)
  --pause-file F  while F exists, hold before the next model, prepare or timed run and write
           F.paused (a build can wait for it instead of disturbing the timings; remove F to go on)
${bench.CPUS_USAGE}`;

const {fail, count, walk} = require('./cli').cli('zoo_bench', USAGE);

function parseArgs(argv) {
  const o = {
    zoo: path.join(REPO, 'build', 'zoo'),
    tier: 'quick',
    only: [],
    build: path.join(REPO, 'build'),
    out: path.join(REPO, 'build', 'bench-zoo'),
    threads: [1],
    rounds: 1,
    confirm: 2,
    runs: 5,
    pairSeconds: 1,
    warmup: 2,
    doc: path.join(REPO, 'docs', 'bench-zoo.md'),
    ortDir: path.join(REPO, 'build', 'ort'),
    rules: null,
    check: true,
    timeoutS: 1800,
    resume: false,
    reportOnly: false,
    pauseFile: null,
    cpus: 'last'
  };
  walk(argv, (a, next) => {
    if (a === '--zoo')
      o.zoo = path.resolve(next());
    else if (a === '--tier') {
      o.tier = next();
      if (!['quick', 'full'].includes(o.tier)) fail(`--tier is quick or full\n${USAGE}`);
    } else if (a === '--only')
      o.only.push(next());
    else if (a === '--build')
      o.build = path.resolve(next());
    else if (a === '--out')
      o.out = path.resolve(next());
    else if (a === '--ort-dir')
      o.ortDir = path.resolve(next());
    else if (a === '--doc') {
      const v = next();
      o.doc = v === 'none' ? null : path.resolve(v);
    } else if (a === '--threads')
      o.threads = [count(a, next(), 1)];
    else if (a === '--rounds')
      o.rounds = count(a, next(), 1);
    else if (a === '--confirm')
      o.confirm = count(a, next(), 0);
    else if (a === '--runs')
      o.runs = count(a, next(), 1);
    else if (a === '--pair-seconds') {
      o.pairSeconds = Number(next());
      if (!(o.pairSeconds >= 0 && o.pairSeconds <= 600))
        fail(`--pair-seconds needs a number of seconds in [0, 600]\n${USAGE}`);
    } else if (a === '--warmup')
      o.warmup = count(a, next(), 0);
    else if (a === '--resume')
      o.resume = true;
    else if (a === '--report-only')
      o.reportOnly = true;
    else if (a === '--pause-file')
      o.pauseFile = path.resolve(next());
    else if (a === '--cpus')
      o.cpus = bench.cpusArg(next(), fail);
    else
      return false;
    return true;
  });
  if (o.reportOnly && !o.resume) fail(`--report-only needs --resume\n${USAGE}`);
  return o;
}

function geomean(xs) {
  const v = xs.filter((x) => x > 0 && Number.isFinite(x));
  return v.length ? Math.exp(v.reduce((s, x) => s + Math.log(x), 0) / v.length) : null;
}

// Speed of column `key` relative to `base` (base median / column median).
function speed(t, key, base = 'a') {
  const c = t[key], b = t[base];
  if (!c || !b || c.error || b.error || c.na || b.na || !c.median || !b.median) return null;
  return b.median / c.median;
}

// The ratios a model is judged by (issue 23's floors): c, d and e against ORT, b against a, d
// against c; paired run by run where measured so (results of 2026-11-29 on), else medians of
// columns timed apart.
function ratiosOf(r, threads) {
  return ratiosOfTimings(r.timings[threads] || {});
}

function ratiosOfTimings(t) {
  return {
    c: t.cPaired ? t.cPaired.median : speed(t, 'c'),
    d: t.dPaired ? t.dPaired.median : speed(t, 'd'),
    e: t.ePaired ? t.ePaired.median : speed(t, 'e'),
    b: t.pairedRatio ? 1 / t.pairedRatio.median : speed(t, 'b'),
    dc: t.dcPaired ? t.dcPaired.median : speed(t, 'd', 'c')
  };
}

const FLOORS = {c: 0.95, b: 0.98, dc: 0.98};

// The floors timings `t` of one model miss.
function missedFloors(t) {
  const q = ratiosOfTimings(t);
  return Object.entries(FLOORS).filter(([k, floor]) => q[k] !== null && q[k] < floor);
}
const COLUMNS = [
  ['c', 'verisub-run vs ORT'], ['d', '--optimize vs ORT'], ['e', 'bf16 vs ORT'],
  ['b', 'ORT(verisub-opt) vs ORT'], ['dc', '--optimize vs without']
];
const fmt = (x) => (x === null || x === undefined ? '—' : x.toFixed(2));

function checkCell(t) {
  const parts = [];
  for (const k of ['c', 'd', 'e']) {
    const col = t[k];
    if (!col || col.na) continue;
    if (col.error) parts.push(`${k}: error`);
    else if (col.check && !/^ok/.test(col.check)) parts.push(`${k}: FAILED`);
  }
  return parts.length ? parts.join(', ') : 'ok';
}

function markdown(o, models, results, meta) {
  const t = o.threads[0];
  const lines = [];
  const parts = meta.parts.filter((p) => p.models > 0);
  const minutes = parts.reduce((m, p) => m + (p.minutes || 0), 0);
  const when = parts.map((p) => `${p.start} to ${p.end || '?'} (${p.models} models, load ` +
                                 `${p.load.start.toFixed(1)} at start)`);
  const older = parts.map((p, i) => (p.served ? 0 : i + 1)).filter((i) => i);
  lines.push(
      `Run ${parts.length > 1 ? `in ${parts.length} parts (--resume): ` : ''}` +
      `${when.join('; ')}; ${minutes.toFixed(1)} min, tier ${o.tier}, ` +
      `${o.threads[0]} thread(s), ${o.rounds} round(s) x ${o.runs} runs (more on small models, ` +
      `until ORT's runs of the original total ${o.pairSeconds} s) after ${o.warmup} ` +
      `warm-up, ${o.rounds > 1 ? 'columns alternating by round' : 'columns in turn'}` +
      (o.confirm ? `, a model below a floor after them ${o.confirm} round(s) more in new processes, ` +
                       'all rounds pooled (marked with their count)' : '') +
      ' (ORT on ' +
      'both models in one process, each verisub-run column in a process of its own, all ' +
      'prepared once and timed together: runs alternate between the processes, each timed run ' +
      'after an untimed one of its model, and every ratio is a median of per-run ratios' +
      (older.length ?
           `; in part(s) ${older.join(', ')} only verisub-run was so: --optimize and bf16 ran ` +
               'in processes of their own (their ratios to ORT drift with the machine) and ' +
               '--optimize vs without was paired in one process, verisub-run ' +
               '--compare-unoptimized' :
           '') +
      '); machine: ' +
      `${os.cpus().length} cores ` +
      `(${os.cpus()[0].model.trim()}), ${bench.pinnedNote(o)}. Timings on this shared machine drift by up to 40% ` +
      'between hours: only the ratios, measured side by side (each model within one part), ' +
      'mean anything.');
  lines.push('');
  lines.push(
      'Speed ratios: ORT-original median / column median (above 1: faster than ONNX Runtime on ' +
      'the original model); **bold** below the floor (verisub-run 0.95, ORT on verisub-opt\'s ' +
      'output 0.98, --optimize vs without 0.98). check: --check of every verisub column against ' +
      'the reference backend\'s outputs on the model as imported.');
  lines.push('');
  lines.push(
      '| model | family | ORT ms | verisub-run | --optimize | bf16 | ORT(verisub-opt) | ' +
      '--optimize vs without | opaque | rewrites | opt s | check |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  const cell = (x, floor) =>
      x === null ? '—' : floor && x < floor ? `**${x.toFixed(2)}**` : x.toFixed(2);
  for (const r of results) {
    const tm = r.timings[t] || {};
    const q = ratiosOf(r, t);
    const a = tm.a && tm.a.median ? tm.a.median.toFixed(2) : 'error';
    const opt = r.opt || {};
    lines.push(
        `| ${r.name}${tm.rounds > o.rounds ? ` (${tm.rounds} rounds)` : ''} | ${r.family} | ${a} | ` +
        `${cell(q.c, FLOORS.c)} | ${cell(q.d)} | ` +
        `${cell(q.e)} | ${cell(q.b, FLOORS.b)} | ${cell(q.dc, FLOORS.dc)} | ` +
        `${r.import && !r.import.error ? r.import.opaque : 'error'} | ` +
        `${opt.error ? 'error' : opt.steps} | ${opt.error ? '—' : opt.seconds.toFixed(1)} | ` +
        `${checkCell(tm)} |`);
  }
  for (const [name, m] of Object.entries(models))
    if (m.status !== 'ok') lines.push(`| ${name} | ${m.family} | ${m.status}: ${m.reason} ||||||||||`);
  const measured = new Set(results.map((r) => r.name));
  const waiting = Object.keys(models).filter((n) => models[n].status === 'ok' && !measured.has(n));
  if (waiting.length) {
    lines.push('');
    lines.push(`Not measured yet (${waiting.length}; \`--resume\` times them): ` +
               `${waiting.sort().join(', ')}.`);
  }
  lines.push('');
  // Per family and over the zoo: geometric mean and worst of each ratio.
  const families = {};
  for (const r of results) (families[r.family] = families[r.family] || []).push(r);
  families['**zoo**'] = results;
  lines.push(
      '| family | models | ' + COLUMNS.map(([, label]) => `${label} geomean (worst)`).join(' | ') +
      ' |');
  lines.push('|---|---:|' + COLUMNS.map(() => '---:').join('|') + '|');
  for (const [family, rs] of Object.entries(families)) {
    const cells = COLUMNS.map(([k]) => {
      const xs = rs.map((r) => ratiosOf(r, t)[k]).filter((x) => x !== null);
      if (!xs.length) return '—';
      const worst = rs.reduce(
          (w, r) => {
            const x = ratiosOf(r, t)[k];
            return x !== null && (w === null || x < w.x) ? {x, name: r.name} : w;
          },
          null);
      return `${fmt(geomean(xs))} (${fmt(worst.x)} ${worst.name})`;
    });
    lines.push(`| ${family} | ${rs.length} | ${cells.join(' | ')} |`);
  }
  const below = [];
  for (const r of results) {
    const q = ratiosOf(r, t);
    for (const [k] of missedFloors(r.timings[t] || {}))
      below.push(`${r.name} ${k} ${q[k].toFixed(2)}`);
  }
  lines.push('');
  lines.push(`Below a floor: ${below.length ? below.join(', ') : 'none'}.`);
  const errors = [];
  for (const r of results) {
    if (r.import && r.import.error) errors.push(`${r.name}: verisub-onnx: ${r.import.error}`);
    if (r.opt && r.opt.error) errors.push(`${r.name}: verisub-opt: ${r.opt.error}`);
    const tm = r.timings[t] || {};
    for (const k of ['a', 'c', 'd', 'e'])
      if (tm[k] && tm[k].error) errors.push(`${r.name}: column ${k}: ${tm[k].error}`);
    for (const k of ['c', 'd', 'e'])
      if (tm[k] && tm[k].check && !/^ok/.test(tm[k].check))
        errors.push(`${r.name}: column ${k}: check ${tm[k].check}`);
  }
  if (errors.length) {
    lines.push('');
    lines.push('Errors:');
    for (const e of errors) lines.push(`- ${e.replace(/\|/g, '\\|')}`);
  }
  return lines.join('\n');
}

// Replaces the marked section of `doc` (or appends one) through a temporary file.
function writeDoc(doc, table) {
  let text = fs.existsSync(doc) ? fs.readFileSync(doc, 'utf8') : '# bench-zoo\n';
  const section = `${BEGIN}\n${table}\n${END}`;
  const b = text.indexOf(BEGIN), e = text.indexOf(END);
  text = b >= 0 && e > b ? text.slice(0, b) + section + text.slice(e + END.length) :
                           `${text.trimEnd()}\n\n${section}\n`;
  const tmp = `${doc}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, doc);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const manifestPath = path.join(o.zoo, 'zoo.json');
  if (!fs.existsSync(manifestPath))
    fail(`${manifestPath} not found: bench/models/export_zoo.py --out ${o.zoo} exports the zoo`);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')).models || {};
  const unknown = o.only.filter((n) => !(n in manifest));
  if (unknown.length)
    fail(`--only ${unknown.join(', ')}: no such model in ${manifestPath} (one name per --only; ` +
         `known: ${Object.keys(manifest).sort().join(' ')})`);
  const models = {};
  for (const [name, m] of Object.entries(manifest))
    if ((o.tier === 'full' || m.quick) && (!o.only.length || o.only.includes(name)))
      models[name] = m;
  const names = Object.keys(models).filter((n) => models[n].status === 'ok').sort();
  if (!names.length) fail(`no exported models of tier ${o.tier} in ${o.zoo}`);
  for (const tool of [['rewriter', 'verisub-opt'], ['runtime', 'verisub-onnx']])
    if (!fs.existsSync(path.join(o.build, ...tool)))
      fail(`${path.join(o.build, ...tool)} is not built`);
  const verisubRun = bench.findVerisubRun(o.build);
  if (!verisubRun) fail(`verisub-run is not built in ${o.build}`);
  fs.mkdirSync(o.out, {recursive: true});
  o.models = o.zoo;  // run_bench's functions read the recorded inputs from o.models
  const json = path.join(o.out, 'bench-zoo.json');
  // What a model's figures depend on: a resumed run keeps earlier figures only when these match.
  const settings = {
    threads: o.threads,
    rounds: o.rounds,
    confirm: o.confirm,
    runs: o.runs,
    pairSeconds: o.pairSeconds,
    warmup: o.warmup
  };
  const parts = [];
  const done = new Map();  // name -> result kept from an earlier part
  const others = [];  // earlier results of models outside this selection (--only): kept as they are
  if (o.resume && fs.existsSync(json)) {
    const prev = JSON.parse(fs.readFileSync(json, 'utf8'));
    // Results from before --pair-seconds took o.runs runs exactly: --pair-seconds 0.
    const absent = {pairSeconds: 0, confirm: 0};  // settings older figures did not record
    const was = (k) => (k in absent ? (prev.settings[k] ?? absent[k]) : prev.settings[k]);
    if (!Object.keys(settings).every((k) => JSON.stringify(was(k)) === JSON.stringify(settings[k])))
      fail(`--resume: ${json} was measured with other settings ` +
           `(${JSON.stringify(prev.settings)}); remove it or use those`);
    for (const r of prev.results || [])
      if (names.includes(r.name))
        done.set(r.name, r);
      else
        others.push(r);
    parts.push(...(prev.parts || []));
    console.error(`zoo_bench: resuming: ${done.size} of ${names.length} models already measured`);
  }
  // served: the verisub-run columns timed in --serve processes beside ONNX Runtime's, paired run
  // by run (before 2026-11-29 only c; d and e ran in processes of their own).
  const part = {
    start: new Date().toISOString(),
    load: {start: os.loadavg()[0]},
    models: 0,
    served: ['c', 'd', 'e']
  };
  if (!o.reportOnly) parts.push(part);
  const t0 = Date.now();
  const results = [...done.values()];
  const save = () => {  // after every model, so an interrupted run resumes where it stopped
    const tmp = `${json}.tmp`;
    fs.writeFileSync(
        tmp, JSON.stringify({options: o, settings, parts, results: [...others, ...results]}, null, 1));
    fs.renameSync(tmp, json);
  };
  const todo = o.reportOnly ? [] : names.filter((n) => !done.has(n));
  if (o.reportOnly)
    console.error(`zoo_bench: --report-only: ${names.length - done.size} of ${names.length} ` +
                  'models not measured yet');
  for (const [i, name] of todo.entries()) {
    const elapsed = (Date.now() - t0) / 1000;
    const eta = i ? ` eta ${((elapsed / i) * (todo.length - i) / 60).toFixed(1)} min` : '';
    console.error(`[${i + 1}/${todo.length}] ${name} (${(elapsed / 60).toFixed(1)} min${eta})`);
    await bench.holdWhilePaused(o);
    const model = path.join(o.zoo, `${name}.onnx`);
    const r = {name, family: models[name].family, onnxNodes: countOnnxNodes(model), timings: {}};
    r.import = bench.importSummary(o, model);
    r.opt = bench.optimize(o, name, model);
    r.check = bench.checkOutputs(o, name, model, r.opt);
    // Below a floor: o.confirm rounds more (the figures then pool every round).
    const confirm = (t) => {
      const missed = missedFloors(t);
      if (!missed.length || !o.confirm) return 0;
      console.error(`    ${name}: ${missed.map(([k]) => `${k} ${fmt(ratiosOfTimings(t)[k])}`).join(', ')} ` +
                    `below the floor after ${t.rounds} round(s): ${o.confirm} more`);
      return o.confirm;
    };
    for (const t of o.threads)
      r.timings[t] = await bench.timeModel(o, model, r.opt, verisubRun, t, confirm);
    const q = ratiosOf(r, o.threads[0]);
    console.error(
        `    ${name}: verisub-run ${fmt(q.c)}x ORT, --optimize ${fmt(q.d)}x, bf16 ${fmt(q.e)}x, ` +
        `ORT(verisub-opt) ${fmt(q.b)}x, check ${checkCell(r.timings[o.threads[0]] || {})}`);
    r.part = parts.length - 1;
    results.push(r);
    ++part.models;
    part.end = new Date().toISOString();
    part.minutes = (Date.now() - t0) / 60000;
    save();
  }
  part.end = new Date().toISOString();
  part.minutes = (Date.now() - t0) / 60000;
  part.load.end = os.loadavg()[0];
  results.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  save();
  const meta = {parts};
  const table = markdown(o, models, results, meta);
  console.log(table);
  if (o.doc) {
    writeDoc(o.doc, table);
    console.error(`zoo_bench: tables written into ${o.doc}; figures in ${json}`);
  }
  const t = o.threads[0];
  const overall = COLUMNS.map(([k, label]) => {
    const g = geomean(results.map((r) => ratiosOf(r, t)[k]).filter((x) => x !== null));
    return `${label} ${fmt(g)}`;
  });
  console.error(`zoo_bench: ${results.length} models (${part.models} this part, ` +
                `${part.minutes.toFixed(1)} min); geomean ` +
                overall.join(', '));
}

main().catch((e) => {
  console.error(`zoo_bench: ${e.stack || e}`);
  process.exit(1);
});
