// The signal policy of long-running commands (src/cli/shutdown.ts) on a manual clock: the copy
// of one Ctrl-C that npm relays right after the terminal's is the same keypress (no forcing); a
// signal after the repeat window forces; a relayed copy after a quick clean shutdown is still
// swallowed (not the default action, which would kill the process).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REPEAT_WINDOW_MS, ShutdownSignals } from '../../src/cli/shutdown.ts';
import type { Logger } from '../../src/logging.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';

function recordingLogger(): { logger: Logger; messages: string[] } {
  const messages: string[] = [];
  const log = (_obj: unknown, msg?: string) => {
    messages.push(String(msg ?? _obj));
  };
  return { logger: { debug: log, info: log, warn: log, error: log, fatal: log } as unknown as Logger, messages };
}

/** The handler this ShutdownSignals installed for `signal` (called directly: no real signal). */
function installed(before: Array<(...args: never) => unknown>, signal: 'SIGINT' | 'SIGTERM'): () => void {
  const added = process.listeners(signal).filter((l) => !before.includes(l));
  assert.equal(added.length, 1);
  return added[0] as () => void;
}

function setup() {
  const clock = new ManualClock();
  const { logger, messages } = recordingLogger();
  const exits: number[] = [];
  let forced = 0;
  const beforeInt = process.listeners('SIGINT');
  const beforeTerm = process.listeners('SIGTERM');
  const signals = new ShutdownSignals(logger, { clock, exit: (code) => exits.push(code) });
  signals.onForce(async () => {
    forced += 1;
  });
  return {
    clock,
    messages,
    exits,
    signals,
    forced: () => forced,
    int: installed(beforeInt, 'SIGINT'),
    term: installed(beforeTerm, 'SIGTERM'),
    listening: () => process.listeners('SIGINT').length > beforeInt.length,
  };
}

const settle = () => new Promise((r) => setImmediate(r));

test('a second SIGINT within the repeat window is the same keypress: clean shutdown, no forcing', async () => {
  const s = setup();
  s.int();
  assert.equal(await s.signals.requested, 'SIGINT');
  await s.clock.advance(5); // npm's relayed copy, a few ms later
  s.int();
  await s.clock.advance(REPEAT_WINDOW_MS - 10);
  s.term();
  await settle();
  assert.equal(s.forced(), 0);
  assert.deepEqual(s.exits, []);
  assert.ok(!s.messages.some((m) => m.includes('forcing')));
  s.signals.dispose();
  await s.clock.advance(REPEAT_WINDOW_MS);
  assert.equal(s.listening(), false);
});

test('a signal after the repeat window forces: the cleanup runs, then the exit with 130', async () => {
  const s = setup();
  s.int();
  await s.clock.advance(REPEAT_WINDOW_MS);
  assert.ok(s.messages.includes('shutting down cleanly; a further signal now forces the exit'));
  s.int();
  await settle();
  assert.equal(s.forced(), 1);
  assert.deepEqual(s.exits, [130]);
  assert.ok(s.messages.some((m) => m.includes('forcing')));
  s.signals.dispose();
  await s.clock.advance(REPEAT_WINDOW_MS);
});

test('a SIGTERM after an internal stop request forces at once (no keypress to repeat)', async () => {
  const s = setup();
  s.signals.request('fatal');
  s.term();
  await settle();
  assert.deepEqual(s.exits, [143]);
  s.signals.dispose();
});

test('after a quick clean shutdown the relayed copy is still swallowed, then the handlers go', async () => {
  const s = setup();
  s.int();
  await s.clock.advance(20);
  s.signals.dispose(); // the clean shutdown finished before npm's copy arrived
  assert.equal(s.listening(), true, 'a late copy must not reach the default action');
  s.int();
  await settle();
  assert.equal(s.forced(), 0);
  assert.deepEqual(s.exits, []);
  await s.clock.advance(REPEAT_WINDOW_MS);
  assert.equal(s.listening(), false);
  assert.ok(!s.messages.includes('shutting down cleanly; a further signal now forces the exit'));
});
