#!/usr/bin/env node
// Runs every test/**/*.test.ts, one Node test process per file (through tsx), APSUP_TEST_CONCURRENCY
// at a time (default 2), the longest first (scripts/test-weights.json: seconds measured on a
// 2-core machine; a new file counts as 30 s). A passing file prints one line, a failing one its
// whole output; the end lists the slowest files by wall time and CPU (the file's process and
// every process it started, read from /proc/self/stat as each one is reaped; Linux only).
// MySQL-backed tests use APSUP_TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test) and are
// never skipped. Arguments: substrings of the files to run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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

const filters = process.argv.slice(2);
let files = collect('test').sort();
if (filters.length > 0) files = files.filter((f) => filters.some((needle) => f.includes(needle)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const weights = JSON.parse(fs.readFileSync(new URL('./test-weights.json', import.meta.url), 'utf8'));
const weight = (f) => weights[f.split(path.sep).join('/')] ?? 30;
files.sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));

const concurrency = Math.max(1, Number(process.env.APSUP_TEST_CONCURRENCY ?? '2') || 2);
const started = performance.now();
const results = [];
let next = 0;

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
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
    child.on('exit', () => {
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
async function lane() {
  while (next < files.length) await runFile(files[next++]);
}
await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, lane));

const failed = results.filter((r) => !r.ok);
const total = (performance.now() - started) / 1000;
const cpuSum = results.every((r) => r.cpu !== null) ? results.reduce((s, r) => s + r.cpu, 0) : null;
const tests = results.reduce((s, r) => s + r.tests, 0);
console.log(
  `\n${results.length} files, ${tests} tests in ${total.toFixed(0)} s${cpuSum === null ? '' : `, ${cpuSum.toFixed(0)} CPU-s`} (concurrency ${concurrency})`,
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
