// The observability facts' cache (src/observability/facts.ts) ages on the runtime's clock, not on
// the system's: a scrape within cacheMs reads the cached value, one after it reads again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PersistedFacts } from '../../src/observability/facts.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';

test('leader facts are read again only once cacheMs passed on the runtime clock', async () => {
  const clock = new ManualClock();
  let reads = 0;
  const runtime = {
    clock,
    config: { families: [] },
    store: {},
    async leases() {
      reads += 1;
      return [{ supervisorKey: 'global', live: reads % 2 === 1 }];
    },
  } as unknown as Runtime;
  const facts = new PersistedFacts(runtime, { cacheMs: 1000 });
  assert.deepEqual(await facts.leaders(), [{ supervisorKey: 'global', live: true }]);
  await clock.advance(999);
  assert.deepEqual(await facts.leaders(), [{ supervisorKey: 'global', live: true }]);
  assert.equal(reads, 1, 'within cacheMs: the cached read');
  await clock.advance(2);
  assert.deepEqual(await facts.leaders(), [{ supervisorKey: 'global', live: false }]);
  assert.equal(reads, 2, 'past cacheMs on the runtime clock: read again');
});
