#!/usr/bin/env node
// Keeps migrations/<backend>/CHECKSUMS, the append-only lock of the migration files:
// one `<sha256>  <file>` line (sha256sum format) per .up.sql/.down.sql of the folder.
//   node scripts/lock-migrations.mjs            append the lines of new files; refuse changes
//   node scripts/lock-migrations.mjs --check    change nothing; exit 1 if a line is missing
//   --root <dir>                                a migrations folder other than ./migrations
// A listed file whose checksum changed, a listed file that was deleted, a malformed or
// duplicated line, or a new migration that sorts before an already locked one is refused (exit 1)
// and the lock file is left as it is: a change to an applied migration ships as a new migration.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BACKENDS = ['sqlite', 'oceanbase'];
const FILE = /^\d{4}_[a-z0-9_]+\.(up|down)\.sql$/;
const LINE = /^([0-9a-f]{64}) {2}(\S+)$/;

export const HEADER = [
  '# Append-only lock of the migration files of this folder, in sha256sum format: `<sha256>  <file>`.',
  '# Never edit or remove a line: an applied migration never changes (a change ships as a NEW',
  '# migration). To lock a new file, add it and run `node scripts/lock-migrations.mjs`, which appends',
  '# the missing lines and refuses to change existing ones. Verify: `grep -v "^#" CHECKSUMS | sha256sum -c`.',
  '# test/migrations.test.ts fails when a migration file is missing here or differs from its line.',
];

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Returns { problems, missing: [{ file, sum }], entries } for one backend folder. */
export function inspect(dir) {
  const lockPath = path.join(dir, 'CHECKSUMS');
  const problems = [];
  const entries = [];
  if (fs.existsSync(lockPath)) {
    fs.readFileSync(lockPath, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line === '' || line.startsWith('#')) return;
        const m = LINE.exec(line);
        if (!m) {
          problems.push(`CHECKSUMS:${i + 1}: malformed line ${JSON.stringify(line)}`);
          return;
        }
        entries.push({ sum: m[1], file: m[2], line: i + 1 });
      });
  }
  const seen = new Set();
  for (const e of entries) {
    if (seen.has(e.file)) problems.push(`CHECKSUMS:${e.line}: ${e.file} is listed twice`);
    seen.add(e.file);
    const full = path.join(dir, e.file);
    if (!fs.existsSync(full)) problems.push(`${e.file} is locked but missing (migrations are never deleted)`);
    else if (sha256(full) !== e.sum) problems.push(`${e.file} changed after it was locked (migrations are append-only: restore it and add a new migration)`);
  }
  const files = fs
    .readdirSync(dir)
    .filter((f) => FILE.test(f))
    .sort();
  const missing = files.filter((f) => !seen.has(f)).map((file) => ({ file, sum: sha256(path.join(dir, file)) }));
  const lastLockedUp = entries
    .map((e) => e.file)
    .filter((f) => f.endsWith('.up.sql'))
    .sort()
    .pop();
  for (const m of missing) {
    if (m.file.endsWith('.up.sql') && lastLockedUp && m.file < lastLockedUp) {
      problems.push(`${m.file} is new but sorts before the locked ${lastLockedUp}: a new migration must come last`);
    }
  }
  return { problems, missing, entries, lockPath };
}

function main(argv) {
  const check = argv.includes('--check');
  const rootAt = argv.indexOf('--root');
  const root = rootAt >= 0 ? path.resolve(argv[rootAt + 1]) : path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations');
  let failed = false;
  for (const backend of BACKENDS) {
    const dir = path.join(root, backend);
    const { problems, missing, lockPath } = inspect(dir);
    for (const p of problems) console.error(`migrations/${backend}/${p}`);
    if (problems.length > 0) {
      failed = true;
      continue;
    }
    if (missing.length === 0) continue;
    if (check) {
      for (const m of missing) console.error(`migrations/${backend}/${m.file} is not in CHECKSUMS (run node scripts/lock-migrations.mjs)`);
      failed = true;
      continue;
    }
    let text = fs.existsSync(lockPath) ? fs.readFileSync(lockPath, 'utf8') : `${HEADER.join('\n')}\n`;
    if (!text.endsWith('\n')) text += '\n';
    text += missing.map((m) => `${m.sum}  ${m.file}\n`).join('');
    fs.writeFileSync(lockPath, text);
    for (const m of missing) console.log(`locked migrations/${backend}/${m.file}`);
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
