// The host's compiles (src/child/entry.ts, esbuild.ts): the child entries are bundled again only
// when a source changed (or the recorded build is gone), and no esbuild process stays beside the
// host once its user-module compiles are done.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { compileKeyed, entryBuilds } from '../../src/child/entry.ts';
import { compileUserModules } from '../../src/child/user-modules.ts';

/** esbuild processes whose parent is this process (Linux /proc). */
function esbuildChildren(): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const [, comm = '', rest = ''] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
      if (comm === 'esbuild' && Number(rest.split(' ')[1]) === process.pid) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The esbuild processes beside this one that were not there before (tsx, which runs this test, keeps its own). */
async function settled(before: number[]): Promise<number[]> {
  const ours = () => esbuildChildren().filter((pid) => !before.includes(pid));
  for (let i = 0; i < 100 && ours().length > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
  return ours();
}

function project(): { src: string; cache: string; entry: string; dep: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-esbuild-'));
  const src = path.join(root, 'src');
  fs.mkdirSync(src);
  const entry = path.join(src, 'entry.ts');
  const dep = path.join(src, 'dep.ts');
  fs.writeFileSync(entry, "import { word } from './dep.ts';\nexport const said: string = word;\n");
  fs.writeFileSync(dep, "export const word: string = 'first';\n");
  return { src, cache: path.join(root, 'cache'), entry, dep };
}

// First in this file: a synchronous compile (the next test) keeps its service for the process.
test('no esbuild process stays beside the host after its user-module compiles, and the next compile starts one again', async () => {
  const p = project();
  const tsx = esbuildChildren();
  const r = await compileUserModules([p.entry], p.cache);
  assert.ok('manifest' in r, JSON.stringify(r));
  assert.deepEqual(await settled(tsx), [], 'after a user-module compile');
  fs.writeFileSync(p.dep, "export const word: string = 'third';\n");
  const again = await compileUserModules([p.entry], p.cache);
  assert.ok('manifest' in again && again.manifest !== r.manifest, 'compiled again after the stop');
  assert.deepEqual(await settled(tsx), []);
});

test('the entries are bundled once per state of their sources; a changed source or a lost build is bundled again', () => {
  const p = project();
  const sources = { entry: p.entry };
  const before = entryBuilds.count;
  const first = compileKeyed(sources, p.src, p.cache);
  assert.ok('dir' in first, JSON.stringify(first));
  assert.equal(entryBuilds.count, before + 1);
  assert.deepEqual(compileKeyed(sources, p.src, p.cache), first, 'the recorded build');
  assert.equal(entryBuilds.count, before + 1, 'no bundle for unchanged sources');

  fs.rmSync(first.dir, { recursive: true });
  const again = compileKeyed(sources, p.src, p.cache);
  assert.deepEqual(again, first, 'rebuilt where it was (content-addressed)');
  assert.ok(fs.existsSync(path.join(first.dir, 'entry.mjs')));
  assert.equal(entryBuilds.count, before + 2);

  fs.writeFileSync(p.dep, "export const word: string = 'second, longer';\n");
  const changed = compileKeyed(sources, p.src, p.cache);
  assert.ok('dir' in changed && changed.dir !== first.dir, 'a changed import is a new build');
  assert.match(fs.readFileSync(path.join(changed.dir, 'entry.mjs'), 'utf8'), /second, longer/);
  assert.equal(entryBuilds.count, before + 3);
});
