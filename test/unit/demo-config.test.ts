// `npm start` (apsup start): the demo sets its schedule keys explicitly, since on the built-in
// prefixes an unset key is the legacy "off" (RFC 11); a value already set by the user wins.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO_SCHEDULE_ENV, demoEnv } from '../../src/cli/demo.ts';
import { parseRuntimeConfig } from '../../src/config/runtime-config.ts';
import { REFERENCE_FAMILIES_MODULE, loadFamilies } from '../../src/registry/load.ts';

const P = 'POWERCONTEXT_SERVER_RUNTIME_';

test('the demo runs the reference families with their schedules on; without its keys they are off', async () => {
  const { registrations } = await loadFamilies(REFERENCE_FAMILIES_MODULE, { allowReference: true, command: 'start' });
  const base = { [`${P}DATABASE_URL`]: 'sqlite:/tmp/demo-config.sqlite' };
  const schedules = (env: Record<string, string | undefined>) =>
    Object.fromEntries(parseRuntimeConfig(env, registrations).families.map((f) => [f.registration.family, f.schedule]));
  assert.deepEqual(schedules(base), { 'topic-memory': { kind: 'off' }, experience: { kind: 'off' }, profile: { kind: 'off' } });
  assert.deepEqual(schedules(demoEnv(base)), {
    'topic-memory': { kind: 'interval', seconds: 300 },
    experience: { kind: 'interval', seconds: 900 },
    profile: { kind: 'cron', expression: '0 2 * * *', timezone: 'Asia/Shanghai' },
  });
  const mine = demoEnv({ ...base, [`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`]: '0' });
  assert.equal(mine[`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`], '0', "the user's value wins");
  assert.equal(Object.keys(DEMO_SCHEDULE_ENV).length, 3);
});
