#!/usr/bin/env node
// Runs every test/**/*.test.ts with the Node test runner through tsx. MySQL-backed tests use
// APSUP_TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test) and are never skipped.
import { spawnSync } from 'node:child_process';
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

const filters = process.argv.slice(2);
let files = collect('test').sort();
if (filters.length > 0) files = files.filter((f) => filters.some((needle) => f.includes(needle)));
// The longest files start first, so the run does not end waiting for one of them.
const FIRST = ['test/contract/mysql.test.ts', 'test/tasks/runner.test.ts', 'test/contract/sqlite.test.ts'];
files.sort((a, b) => (FIRST.indexOf(a) + 1 || 99) - (FIRST.indexOf(b) + 1 || 99));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const concurrency = process.env.APSUP_TEST_CONCURRENCY ?? '2';
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files], {
  stdio: 'inherit',
  env: process.env,
});
process.exit(result.status ?? 1);
