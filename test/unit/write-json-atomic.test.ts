// writeJsonAtomic (src/devtools/files.ts): the chaos runner's overlap detection and the write-path
// attack tests read files other processes write while they write them. A reader in another process
// polls the file while this one rewrites it: it must never see half a file (a plain
// fs.writeFileSync truncates first and fails this within a few hundred rewrites).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { writeJsonAtomic } from '../../src/devtools/files.ts';

const READER = `
const fs = require('node:fs');
const file = process.argv[1];
let reads = 0, torn = 0;
const stop = () => { process.stdout.write(JSON.stringify({ reads, torn })); process.exit(0); };
process.on('SIGTERM', stop);
process.stdout.write('ready\\n');
for (;;) {
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch { continue; }
  reads += 1;
  try { JSON.parse(text); } catch { torn += 1; }
  if (fs.existsSync(file + '.done')) stop();
}`;

test('a reader in another process never sees half of a file being rewritten', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-atomic-'));
  const file = path.join(dir, 'report.json');
  const value = { rows: Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'x'.repeat(20) })) }; // ~0.7 MB
  writeJsonAtomic(file, value);
  const reader = spawn(process.execPath, ['-e', READER, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  reader.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  await new Promise<void>((resolve) => reader.stdout.once('data', () => resolve()));
  for (let i = 0; i < 300; i += 1) writeJsonAtomic(file, { ...value, i });
  fs.writeFileSync(`${file}.done`, '');
  await new Promise((resolve) => reader.once('exit', resolve));
  const { reads, torn } = JSON.parse(out.slice(out.indexOf('{'))) as { reads: number; torn: number };
  const left = fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'));
  fs.rmSync(dir, { recursive: true, force: true });
  assert.ok(reads > 0, 'the reader read the file');
  assert.equal(torn, 0, `${torn} of ${reads} reads saw a partial file`);
  assert.deepEqual(left, [], 'no temporary file is left');
});
