#!/usr/bin/env node
// Runs every test/**/*.test.ts, one Node process per file (through tsx, the tests in that process:
// `node --test` would start a second process per file). The longest files start first, and a file
// starts while the cores it is expected to keep busy fit (scripts/test-weights.json: wall and CPU
// seconds per file, measured on a 2-core machine; a new file counts as 30 s on one core): the suite
// is CPU-bound, and a file that mostly waits on a database clock can run next to one that computes.
// APSUP_TEST_CONCURRENCY caps the files running at once (default three times the cores: many files mostly wait on a database or a child), APSUP_TEST_CORES
// sets the cores to fill (default all), APSUP_TEST_FILE_TIMEOUT_S bounds one file (default 600 s). A passing file prints one line, a failing one its whole
// output; the end lists the slowest files by wall time and CPU (the file's process and every process
// it started, read from /proc/self/stat as each one is reaped; Linux only). `--record` rewrites the
// weights from this run (a full run on a quiet machine). MySQL-backed tests use APSUP_TEST_MYSQL_URL
// (default mysql://root@127.0.0.1:3306/test) and are never skipped. Other arguments: substrings of
// the files to run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleTests } from './test-bundle.mjs';

function collect(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collect(full));
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

/** CPU seconds of this process's reaped descendants (cutime + cstime), or null off Linux. */
function childrenCpu() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

const args = process.argv.slice(2);
const record = args.includes('--record');
const filters = args.filter((a) => a !== '--record');
const all = collect('test').sort();
let files = [...all];
if (filters.length > 0) files = files.filter((f) => filters.some((needle) => f.includes(needle)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const weightsUrl = new URL('./test-weights.json', import.meta.url);
const weights = JSON.parse(fs.readFileSync(weightsUrl, 'utf8'));
const key = (f) => f.split(path.sep).join('/');
/** Expected wall seconds and cores kept busy (CPU / wall) of a file. */
function expected(f) {
  const w = weights[key(f)];
  if (w === undefined) return { wall: 30, cores: 1 };
  if (typeof w === 'number') return { wall: w, cores: 1 };
  return { wall: w.wall, cores: Math.min(Math.max(w.cpu / Math.max(w.wall, 0.1), 0.05), cores) };
}
const cores = Math.max(1, Number(process.env.APSUP_TEST_CORES ?? os.availableParallelism()) || 1);
const fileTimeoutS = Math.max(1, Number(process.env.APSUP_TEST_FILE_TIMEOUT_S ?? 600) || 600);
const concurrency = Math.max(1, Number(process.env.APSUP_TEST_CONCURRENCY ?? String(3 * cores)) || 3 * cores);
files.sort((a, b) => expected(b).wall - expected(a).wall || a.localeCompare(b));

// Compiled test files (scripts/test-bundle.mjs) start without tsx; APSUP_TEST_BUNDLE=0 runs the sources.
const bundle = process.env.APSUP_TEST_BUNDLE === '0' ? null : await bundleTests(all.map(key));
const started = performance.now();
const results = [];

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const args = bundle
      ? ['--enable-source-maps', '--test-reporter=spec', path.join(bundle, file.replace(/\.ts$/, '.mjs'))]
      : ['--import', 'tsx', '--test-reporter=spec', file];
    const child = spawn(process.execPath, args, {
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    let cpu = null;
    // A file that hangs (a test process kept alive by a process it leaked, say) fails at the bound
    // instead of holding the run until CI's own limit.
    const timer = setTimeout(() => {
      output += `\n[run-tests] ${file} still running after ${fileTimeoutS} s (APSUP_TEST_FILE_TIMEOUT_S): killed\n`;
      child.kill('SIGKILL');
    }, fileTimeoutS * 1000);
    child.on('exit', () => {
      clearTimeout(timer);
      // A process the file left behind may hold its output pipes open: stop waiting for them.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 5000).unref();
      // Emitted right after the reap: the CPU delta since the previous reap is this file's.
      const now = childrenCpu();
      if (now !== null) {
        cpu = now - lastCpu;
        lastCpu = now;
      }
    });
    child.on('close', (code, signal) => {
      const count = (label) => Number(new RegExp(`^ℹ ${label} (\\d+)$`, 'm').exec(output)?.[1] ?? 0);
      const r = { file, ok: code === 0, code, signal, wall: (performance.now() - t0) / 1000, cpu, tests: count('tests'), fail: count('fail') };
      results.push(r);
      const at = ((performance.now() - started) / 1000).toFixed(0).padStart(4);
      const cpuText = cpu === null ? '' : `, ${cpu.toFixed(1)} CPU-s`;
      if (r.ok) console.log(`${at}s ✔ ${file} (${r.tests} tests, ${r.wall.toFixed(1)} s${cpuText})`);
      else {
        console.log(`${at}s ✖ ${file} (exit ${code ?? signal}, ${r.fail} of ${r.tests} tests failed, ${r.wall.toFixed(1)} s)`);
        console.log(output);
      }
      resolve();
    });
  });
}

let lastCpu = childrenCpu() ?? 0;
// The longest waiting file that fits next to the running ones starts; one always runs.
await new Promise((done) => {
  const waiting = [...files];
  let running = 0;
  let busy = 0;
  const fill = () => {
    if (waiting.length === 0 && running === 0) return done();
    while (waiting.length > 0 && running < concurrency) {
      const i = running === 0 ? 0 : waiting.findIndex((f) => busy + expected(f).cores <= cores + 1e-9);
      if (i < 0) break;
      const [file] = waiting.splice(i, 1);
      const need = expected(file).cores;
      running += 1;
      busy += need;
      void runFile(file).then(() => {
        running -= 1;
        busy -= need;
        fill();
      });
    }
  };
  fill();
});

const failed = results.filter((r) => !r.ok);
const total = (performance.now() - started) / 1000;
const cpuSum = results.every((r) => r.cpu !== null) ? results.reduce((s, r) => s + r.cpu, 0) : null;
const tests = results.reduce((s, r) => s + r.tests, 0);
console.log(
  `\n${results.length} files, ${tests} tests in ${total.toFixed(0)} s${cpuSum === null ? '' : `, ${cpuSum.toFixed(0)} CPU-s`} (at most ${concurrency} at once on ${cores} cores)`,
);
console.log('slowest files:');
for (const r of [...results].sort((a, b) => b.wall - a.wall).slice(0, 10)) {
  console.log(`  ${r.wall.toFixed(1).padStart(6)} s${r.cpu === null ? '' : `  ${r.cpu.toFixed(1).padStart(6)} CPU-s`}  ${r.file}`);
}
if (failed.length > 0) {
  console.log(`\n${failed.length} file(s) failed:`);
  for (const r of failed) console.log(`  ✖ ${r.file}`);
  process.exit(1);
}
if (record) {
  const out = filters.length > 0 ? { ...weights } : {};
  for (const r of results) out[key(r.file)] = { wall: Number(r.wall.toFixed(1)), cpu: Number((r.cpu ?? r.wall).toFixed(1)) };
  const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(weightsUrl, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`weights of ${results.length} files written to scripts/test-weights.json`);
}
