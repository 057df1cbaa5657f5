// `apsup tasks` as an operator runs it (real processes, both backends): every error is one line
// `apsup: ...` with the documented exit code (2 invalid command or input, nothing written; 1
// refused by the database), large payloads from --payload-file or standard input (--payload -),
// negative numbers as option values reach validation, and a timeout that rounds to 0 ms is refused.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, afterEach, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { FIXTURE_TASKS_MODULE, REPO_ROOT, killChildren, makeRunner, runCli, tempDir, type CliRun } from './harness.ts';

const ENV = { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE };

/** `apsup <args>` with `input` written to its standard input. */
function runWithStdin(fx: BackendFixture, args: string[], input: string): Promise<CliRun> {
  const child = spawn(process.execPath, ['bin/apsup.mjs', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: fx.url, ...ENV, APSUP_LOG_LEVEL: 'error' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdin.end(input);
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

function oneLine(r: CliRun, code: number, pattern: RegExp, what: string): void {
  assert.equal(r.code, code, `${what}: exit ${r.code}; stderr: ${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${what}: one line, got:\n${r.stderr}`);
  assert.match(lines[0], /^apsup: /, what);
  assert.match(lines[0], pattern, what);
}

async function count(fx: BackendFixture): Promise<number> {
  return Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n);
}

for (const backend of BACKENDS) {
  describe(`apsup tasks command line (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    afterEach(() => killChildren());
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('errors are one line with exit 2 (input) or 1 (refused); negative option values and a 0 ms timeout are validated', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const cli = (args: string[]) => runCli(fx, ['tasks', ...args], ENV);
      const cases: Array<[string[], RegExp]> = [
        [['list', '--limit', '-1'], /--limit must be an integer from 1 to 1000, got "-1"/],
        [['list', '--before', '-5'], /--before must be an integer from 1 to/],
        [['list', '--state', 'sleeping'], /--state must be one of pending, running/],
        [['prune', '--older-than-days', '-3'], /--older-than-days must be a non-negative number, got "-3"/],
        [['submit', 'fx-quick', '--timeout-seconds', '-10'], /--timeout-seconds must be a positive, finite number, got "-10"/],
        [['submit', 'fx-quick', '--timeout-seconds', '0.0004'], /--timeout-seconds 0.0004 rounds to 0 ms; the smallest timeout is 0.001/],
        [['submit', 'fx-quick', '--handler-version', '-1'], /--handler-version must be an integer from 0/],
        [['submit', 'fx-quick', '--payload', '{not json'], /--payload must be JSON/],
        [['submit', 'fx-quick', '--payload', '{"nope":1}'], /payload of fx-quick is invalid/],
        [['submit', 'no-such-type'], /no handler is registered for task type "no-such-type"/],
        [['submit', 'fx-quick', '--payload-file', '/nonexistent/payload.json'], /--payload-file \/nonexistent\/payload.json: cannot be read \(ENOENT\)/],
        [['submit', 'fx-quick', '--payload', '{}', '--payload-file', '/x'], /either --payload or --payload-file/],
        [['show', 'abc'], /a task id must be an integer/],
        [['show', '--no-such-option'], /Unknown option '--no-such-option'/],
      ];
      for (const [args, pattern] of cases) oneLine(await cli(args), 2, pattern, args.join(' '));
      assert.equal(await count(fx), 0, 'nothing was written');

      // 1 ms is the smallest timeout and is accepted; the API refuses what rounds to 0 as well.
      const ok = await cli(['submit', 'fx-quick', '--timeout-seconds', '0.001']);
      assert.equal(ok.code, 0, ok.stderr);
      const kit = await makeRunner(fx);
      await assert.rejects(
        kit.service.submit({ taskType: 'fx-quick', payload: {}, timeoutMs: 0.4 }),
        (e: unknown) => e instanceof InvalidArgumentError && /rounds to 0 ms/.test(e.message),
      );
      await assert.rejects(
        new TaskStore(fx.store as BaseStore).submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 0.4 }),
        InvalidArgumentError,
      );

      // Refusals by the database: one line, exit 1.
      const pending = (JSON.parse(ok.stdout) as { taskId: number }).taskId;
      oneLine(await cli(['delete', String(pending)]), 1, /task active/, 'delete an active task');
      oneLine(await cli(['cancel', '999999']), 1, /task not found/, 'cancel a missing task');
      oneLine(await cli(['show', '999999']), 1, /task 999999 does not exist/, 'show a missing task');
    });

    test('prune measures the age on the database clock, not on a host clock that runs ahead', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const { taskId } = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 1, payload: {}, timeoutMs: 60_000 });
      const claimed = await tasks.claim('prune-test', 30_000, ['fx-quick']);
      assert.equal(claimed?.taskId, taskId);
      await tasks.succeed(taskId, claimed!.attemptToken, null); // finished now, by the database clock
      // This host's clock 3 days ahead: a cutoff of 'now - 1 day' computed here would take the task.
      const skewed = await runCli(fx, ['tasks', 'prune', '--older-than-days', '1'], {
        ...ENV,
        NODE_OPTIONS: `--import ${pathToFileURL(path.join(REPO_ROOT, 'test/fixtures/clock-skew.mjs')).href}`,
        APSUP_TEST_CLOCK_SKEW_MS: String(3 * 86_400_000),
      });
      assert.equal(skewed.code, 0, skewed.stderr);
      assert.deepEqual(JSON.parse(skewed.stdout), { deleted: 0 });
      assert.equal(await count(fx), 1, 'a task finished a moment ago is not older than a day');
      const now = await runCli(fx, ['tasks', 'prune', '--older-than-days', '0'], ENV);
      assert.equal(now.code, 0, now.stderr);
      assert.deepEqual(JSON.parse(now.stdout), { deleted: 1 });
      assert.equal(await count(fx), 0);
    });

    test('large payloads from --payload-file and from standard input (--payload -)', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      // About 2 MB of JSON: beyond a comfortable command line.
      const rowId = `r-${'x'.repeat(2_000_000)}`;
      const file = path.join(tempDir('apsup-payload'), 'payload.json');
      fs.writeFileSync(file, JSON.stringify({ rowId, dedupe: 'from-file' }));
      const fromFile = await runCli(fx, ['tasks', 'submit', 'fx-sleep', '--payload-file', file], ENV);
      assert.equal(fromFile.code, 0, fromFile.stderr);
      const a = await tasks.read((JSON.parse(fromFile.stdout) as { taskId: number }).taskId);
      assert.deepEqual(a?.payload, { rowId, dedupe: 'from-file' });
      assert.equal(a?.dedupeKey, 'from-file');

      const fromStdin = await runWithStdin(fx, ['tasks', 'submit', 'fx-sleep', '--payload', '-'], JSON.stringify({ rowId, dedupe: 'from-stdin' }));
      assert.equal(fromStdin.code, 0, fromStdin.stderr);
      const b = await tasks.read((JSON.parse(fromStdin.stdout) as { taskId: number }).taskId);
      assert.deepEqual(b?.payload, { rowId, dedupe: 'from-stdin' });

      const badStdin = await runWithStdin(fx, ['tasks', 'submit', 'fx-sleep', '--payload', '-'], '{"rowId": ');
      oneLine(badStdin, 2, /--payload - must be JSON/, 'bad JSON on stdin');
      assert.equal(Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n), 2);
    });
  });
}
