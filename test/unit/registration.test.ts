// Family registrations (RFC 1, 10; A15): unique binding names, families and prefixes; the
// prefix matches the family; a registration names an existing processor module; the families
// module is loaded by path.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { REFERENCE_FAMILIES_MODULE, loadFamilies } from '../../src/registry/load.ts';
import { RegistrationError, validateRegistrations, type FamilyRegistration } from '../../src/registry/registration.ts';
import { PROCESSOR_DIR, registration, registrations } from './fixtures.ts';

function rejects(list: unknown, pattern: RegExp, baseDir = PROCESSOR_DIR): void {
  assert.throws(
    () => validateRegistrations(list, baseDir),
    (e: unknown) => {
      assert.ok(e instanceof RegistrationError, `expected a RegistrationError, got ${String(e)}`);
      assert.match(e.message, pattern);
      return true;
    },
  );
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-families-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('validateRegistrations', () => {
  test('accepts the four families and keeps their declarations', () => {
    const list = registrations();
    const validated = validateRegistrations(list, PROCESSOR_DIR);
    assert.deepEqual(
      validated.map((r) => [r.bindingName, r.family, r.configPrefix]),
      list.map((r) => [r.bindingName, r.family, r.configPrefix]),
    );
    assert.deepEqual(validated[3]!.schedule, { kind: 'cron', expression: '0 2 * * *', timezone: 'Asia/Shanghai' });
  });

  test('a relative processor path is resolved against the families module directory; a missing schedule is off', () => {
    const r = { ...registration('memory'), processor: { module: './memory.processor.mjs' }, schedule: undefined } as unknown as FamilyRegistration;
    const [v] = validateRegistrations([r], PROCESSOR_DIR);
    assert.equal(v!.processor.module, path.join(PROCESSOR_DIR, 'memory.processor.mjs'));
    assert.deepEqual(v!.schedule, { kind: 'off' });
  });

  test('a non-array or empty list is rejected', () => {
    rejects(undefined, /non-empty array/);
    rejects([], /non-empty array/);
    rejects({ memory: registration('memory') }, /non-empty array/);
    rejects([null], /registration #1 is not an object/);
  });

  test('A15: duplicate binding names are rejected', () => {
    rejects([registration('memory'), registration('topic-memory', { bindingName: 'memory.consolidate' })], /duplicate binding name memory\.consolidate/);
  });

  test('A15: duplicate families (and with them duplicate prefixes) are rejected', () => {
    rejects([registration('memory'), registration('memory', { bindingName: 'memory.second' })], /duplicate family memory \(config prefix MEMORY\)/);
  });

  test('A15: a prefix that does not match the family (a prefix conflict) is rejected, naming the expected prefix', () => {
    rejects([registration('topic-memory', { configPrefix: 'TOPIC' })], /configPrefix TOPIC does not match family topic-memory; it must be TOPIC_MEMORY/);
    rejects([registration('topic-memory', { configPrefix: 'TOPICMEMORY' })], /must be TOPIC_MEMORY/);
    // Two families cannot share a prefix: the second one's prefix does not match its name.
    rejects([registration('memory'), registration('topic-memory', { configPrefix: 'MEMORY' })], /must be TOPIC_MEMORY/);
  });

  test('names must be canonical', () => {
    rejects([registration('memory', { family: 'Topic_Memory' })], /kebab-case/);
    rejects([registration('memory', { configPrefix: 'memory' })], /UPPER_SNAKE_CASE/);
    rejects([registration('memory', { bindingName: 'Memory Binding' })], /bindingName/);
  });

  test('A15: the runtime-wide ARTIFACT_PROCESSING prefix cannot be a family', () => {
    rejects([registration('memory', { family: 'artifact-processing', configPrefix: 'ARTIFACT_PROCESSING', bindingName: 'ap' })], /reserved/);
  });

  test('A15: schedules are checked: positive integer interval, valid cron and IANA time zone', () => {
    rejects([registration('memory', { schedule: { kind: 'interval', seconds: 0 } })], /positive integer/);
    rejects([registration('memory', { schedule: { kind: 'interval', seconds: 1.5 } })], /positive integer/);
    rejects([registration('memory', { schedule: { kind: 'weekly' } as never })], /off, interval or cron/);
    // Bounds the runtime can honour (a Node timer, the INT of pc_aps_begin_scan, the 1000-key batches).
    rejects([registration('memory', { schedule: { kind: 'interval', seconds: 2 ** 31 } })], /at most 2147483647/);
    rejects([registration('memory', { defaults: { workerTimeoutSeconds: 2_147_484 } })], /workerTimeoutSeconds.*at most 2147483/);
    rejects([registration('memory', { defaults: { maxWorkers: 1001 } })], /maxWorkers.*at most 1000/);
    rejects([registration('memory', { settings: ['memory_model'] })], /settings must list/);
    rejects([registration('profile', { schedule: { kind: 'cron', expression: '0 2 * * *' } as never })], /expression and timezone/);
    rejects([registration('profile', { schedule: { kind: 'cron', expression: '0 2 * * *', timezone: 'Mars/Base' } })], /Mars\/Base.*IANA/);
    rejects([registration('profile', { schedule: { kind: 'cron', expression: '0 25 * * *', timezone: 'UTC' } })], /\(profile\).*cron/);
  });

  test('defaults are checked', () => {
    rejects([registration('memory', { defaults: { maxWorkers: 0 } })], /defaults\.maxWorkers/);
    rejects([registration('memory', { defaults: { maxWorkers: 1.5 } })], /defaults\.maxWorkers/);
    rejects([registration('memory', { defaults: { workerTimeoutSeconds: -1 } })], /defaults\.workerTimeoutSeconds/);
  });

  test('A15: a registration without its processor module is a missing capability', () => {
    rejects([registration('memory', { processor: { module: '' } })], /processor\.module/);
    rejects(
      [registration('memory', { processor: { module: path.join(PROCESSOR_DIR, 'nope.processor.ts') } })],
      /processor module .*nope\.processor\.ts does not exist/,
    );
    rejects([registration('memory', { processor: { module: PROCESSOR_DIR } })], /does not exist/);
    rejects([registration('memory', { processor: { module: processor('memory'), exportName: 42 as never } })], /exportName/);
    rejects([registration('memory', { pendingWork: { remarkDirty: 'yes' as never } })], /remarkDirty/);
  });

  test('a .js specifier of a .ts processor (tsx resolution) is accepted', () => {
    fs.writeFileSync(path.join(tmp, 'p.ts'), 'export default { async processScope() {} };\n');
    const [v] = validateRegistrations([registration('memory', { processor: { module: './p.js' } })], tmp);
    assert.equal(v!.processor.module, path.join(tmp, 'p.js'));
  });
});

function processor(family: string): string {
  return path.join(PROCESSOR_DIR, `${family}.processor.mjs`);
}

describe('loadFamilies', () => {
  test('without a module nothing is loaded: the refusal explains --families (RFC 11: no stand-ins)', async () => {
    await assert.rejects(
      loadFamilies(undefined),
      (e: unknown) => e instanceof RegistrationError && /--families/.test(e.message) && /apsup start/.test(e.message),
    );
    await assert.rejects(
      loadFamilies(REFERENCE_FAMILIES_MODULE),
      (e: unknown) => e instanceof RegistrationError && /reference families are a demo/.test(e.message),
    );
  });

  test('the demo (apsup start) loads the reference families', async () => {
    const { module, registrations: regs } = await loadFamilies(REFERENCE_FAMILIES_MODULE, { allowReference: true, command: 'start' });
    assert.equal(module, REFERENCE_FAMILIES_MODULE);
    assert.deepEqual(
      regs.map((r) => [r.family, r.configPrefix]),
      [
        ['topic-memory', 'TOPIC_MEMORY'],
        ['experience', 'EXPERIENCE'],
        ['profile', 'PROFILE'],
      ],
    );
    for (const r of regs) assert.ok(fs.existsSync(r.processor.module), r.processor.module);
  });

  test('a families module is loaded by path; processor paths resolve against its directory', async () => {
    fs.writeFileSync(path.join(tmp, 'proc.mjs'), 'export default { async processScope() {} };\n');
    const file = path.join(tmp, 'families.mjs');
    fs.writeFileSync(
      file,
      `export default [{ bindingName: 'notes.index', family: 'notes', configPrefix: 'NOTES', schedule: { kind: 'interval', seconds: 60 }, processor: { module: './proc.mjs' } }];\n`,
    );
    const { module, registrations: regs } = await loadFamilies(file);
    assert.equal(module, file);
    assert.equal(regs.length, 1);
    assert.equal(regs[0]!.processor.module, path.join(tmp, 'proc.mjs'));
  });

  test('a missing module, or one without a default list, is a RegistrationError', async () => {
    await assert.rejects(
      loadFamilies(path.join(tmp, 'missing.mjs')),
      (e: unknown) => e instanceof RegistrationError && /cannot load families module .*missing\.mjs/.test(e.message),
    );
    const file = path.join(tmp, 'no-default.mjs');
    fs.writeFileSync(file, 'export const families = [];\n');
    await assert.rejects(loadFamilies(file), (e: unknown) => e instanceof RegistrationError && /default-export a non-empty array/.test(e.message));
    const dup = path.join(tmp, 'dup.mjs');
    fs.writeFileSync(
      dup,
      `const r = (b) => ({ bindingName: b, family: 'notes', configPrefix: 'NOTES', processor: { module: './proc.mjs' } });\nexport default [r('a'), r('b')];\n`,
    );
    fs.writeFileSync(path.join(tmp, 'proc.mjs'), 'export default { async processScope() {} };\n');
    await assert.rejects(loadFamilies(dup), (e: unknown) => e instanceof RegistrationError && /duplicate family notes/.test(e.message));
  });
});
