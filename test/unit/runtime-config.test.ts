// Runtime configuration (RFC 10, 11; A15): every start-up error is a ConfigError naming the
// variable; compatibility aliases map to exactly one field; effective policies.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/config/database-url.ts';
import { describeConfig, parseRuntimeConfig, type FamilyConfig, type RuntimeConfig } from '../../src/config/runtime-config.ts';
import type { FamilyRegistration } from '../../src/registry/registration.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { P, env, registration, registrations } from './fixtures.ts';

const MYSQL = 'mysql://app:pw@127.0.0.1:3306/pc';

function parse(values: Record<string, string>, regs: FamilyRegistration[] = registrations()): RuntimeConfig {
  return parseRuntimeConfig(env(values), regs);
}

function family(config: RuntimeConfig, name: string): FamilyConfig {
  const f = config.families.find((x) => x.registration.family === name);
  assert.ok(f, `family ${name} configured`);
  return f;
}

/** Start-up fails with a ConfigError whose message contains every fragment (variable names in full). */
function rejects(values: Record<string, string>, fragments: string[], regs: FamilyRegistration[] = registrations()): string {
  let message = '';
  assert.throws(
    () => parse(values, regs),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${String(e)}`);
      message = e.message;
      for (const fragment of fragments)
        assert.ok(e.message.includes(fragment), `message ${JSON.stringify(e.message)} should contain ${JSON.stringify(fragment)}`);
      return true;
    },
  );
  return message;
}

describe('A15: mode and role', () => {
  test('default mode is global and role all; dedicated is accepted', () => {
    const c = parse({});
    assert.equal(c.mode, 'global');
    assert.equal(c.role, 'all');
    assert.equal(parse({ ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'dedicated' }).mode, 'dedicated');
  });

  test('an unknown mode names the variable and the value', () => {
    rejects({ ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'hybrid' }, [`${P}ARTIFACT_PROCESSING_SUPERVISOR_MODE`, 'hybrid', 'global', 'dedicated']);
    rejects({ ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'GLOBAL ' }, [`${P}ARTIFACT_PROCESSING_SUPERVISOR_MODE`]);
  });

  test('an unknown role names the variable', () => {
    rejects({ ARTIFACT_PROCESSING_ROLE: 'worker', DATABASE_URL: MYSQL }, [`${P}ARTIFACT_PROCESSING_ROLE`, 'worker']);
  });

  for (const role of ['api', 'background'] as const) {
    test(`role ${role} is rejected on SQLite (explicit and default URL) and accepted on mysql:// and oceanbase://`, () => {
      rejects({ ARTIFACT_PROCESSING_ROLE: role, DATABASE_URL: 'sqlite:/tmp/x.sqlite' }, [`${P}ARTIFACT_PROCESSING_ROLE`, 'SQLite']);
      rejects({ ARTIFACT_PROCESSING_ROLE: role }, [`${P}ARTIFACT_PROCESSING_ROLE`, 'SQLite']);
      assert.equal(parse({ ARTIFACT_PROCESSING_ROLE: role, DATABASE_URL: MYSQL }).role, role);
      assert.equal(parse({ ARTIFACT_PROCESSING_ROLE: role, DATABASE_URL: 'oceanbase://app:pw@ob:2881/pc' }).role, role);
    });
  }

  test('role all is accepted on SQLite', () => {
    const c = parse({ ARTIFACT_PROCESSING_ROLE: 'all', DATABASE_URL: 'sqlite:/tmp/x.sqlite' });
    assert.deepEqual(c.database, { backend: 'sqlite', file: '/tmp/x.sqlite' });
  });
});

describe('A15: family numbers', () => {
  for (const field of ['MAX_WORKERS', 'SCHEDULE_SECONDS', 'WORKER_TIMEOUT_SECONDS']) {
    // 0 is the legacy "off" of a built-in schedule key (below), a refusal everywhere else.
    for (const bad of [...(field === 'SCHEDULE_SECONDS' ? [] : ['0']), '-1', 'abc', '1.5', 'Infinity', 'NaN', '2 workers']) {
      test(`${field}=${JSON.stringify(bad)} is rejected naming the variable`, () => {
        rejects({ [`TOPIC_MEMORY_${field}`]: bad }, [`${P}TOPIC_MEMORY_${field}`, JSON.stringify(bad)]);
      });
    }
  }

  test('valid values replace the registration defaults of that family only', () => {
    const c = parse({ TOPIC_MEMORY_MAX_WORKERS: '7', TOPIC_MEMORY_SCHEDULE_SECONDS: '45', TOPIC_MEMORY_WORKER_TIMEOUT_SECONDS: '120' });
    const t = family(c, 'topic-memory');
    assert.equal(t.maxWorkers, 7);
    assert.deepEqual(t.schedule, { kind: 'interval', seconds: 45 });
    assert.equal(t.workerTimeoutMs, 120_000);
    assert.equal(family(c, 'experience').maxWorkers, 2);
    assert.deepEqual(family(c, 'experience').schedule, { kind: 'off' });
  });

  test('blank values count as unset', () => {
    const c = parse({ TOPIC_MEMORY_MAX_WORKERS: '  ' });
    assert.equal(family(c, 'topic-memory').maxWorkers, 4);
  });
});

describe('A15: schedules', () => {
  test('interval and cron both set: names both variables', () => {
    rejects({ TOPIC_MEMORY_SCHEDULE_SECONDS: '60', TOPIC_MEMORY_CRON: '*/5 * * * *', TOPIC_MEMORY_TIMEZONE: 'UTC' }, [
      `${P}TOPIC_MEMORY_SCHEDULE_SECONDS`,
      `${P}TOPIC_MEMORY_CRON`,
    ]);
    rejects({ PROFILE_SCHEDULE_SECONDS: '60', PROFILE_CRON: '0 3 * * *' }, [`${P}PROFILE_SCHEDULE_SECONDS`, `${P}PROFILE_CRON`]);
  });

  test('cron without a time zone is rejected naming the TIMEZONE variable', () => {
    rejects({ TOPIC_MEMORY_CRON: '*/5 * * * *' }, [`${P}TOPIC_MEMORY_CRON`, `${P}TOPIC_MEMORY_TIMEZONE`]);
  });

  test('an invalid IANA time zone is rejected naming the variable', () => {
    for (const tz of ['Mars/Olympus_Mons', '+08:00', 'GMT+8']) {
      rejects({ PROFILE_TIMEZONE: tz }, [`${P}PROFILE_TIMEZONE`, tz]);
      rejects({ TOPIC_MEMORY_CRON: '0 * * * *', TOPIC_MEMORY_TIMEZONE: tz }, [`${P}TOPIC_MEMORY_TIMEZONE`]);
    }
  });

  test('an invalid cron expression is rejected naming the variable', () => {
    for (const expression of ['61 * * * *', '0 2 * *', 'every day', '@daily', '0 0 * * 8']) {
      rejects({ PROFILE_CRON: expression, PROFILE_TIMEZONE: 'UTC' }, [`${P}PROFILE_CRON`]);
    }
  });

  test('a time zone without a cron schedule is rejected (interval family, or together with an interval)', () => {
    rejects({ TOPIC_MEMORY_TIMEZONE: 'UTC' }, [`${P}TOPIC_MEMORY_TIMEZONE`]);
    // Profile's registered schedule is cron; an interval from the environment must not be
    // silently replaced by the registered cron because a time zone is also set.
    rejects({ PROFILE_SCHEDULE_SECONDS: '60', PROFILE_TIMEZONE: 'UTC' }, [`${P}PROFILE_TIMEZONE`, `${P}PROFILE_SCHEDULE_SECONDS`]);
  });

  test('SCHEDULE_ENABLED=true for a family without a schedule is rejected naming the variable', () => {
    const regs = [registration('memory', { schedule: { kind: 'off' } }), registration('topic-memory')];
    rejects({ MEMORY_SCHEDULE_ENABLED: 'true' }, [`${P}MEMORY_SCHEDULE_ENABLED`, 'memory'], regs);
    // With a schedule from the environment it is fine.
    const c = parse({ MEMORY_SCHEDULE_ENABLED: 'true', MEMORY_SCHEDULE_SECONDS: '30' }, regs);
    assert.deepEqual(family(c, 'memory').schedule, { kind: 'interval', seconds: 30 });
  });

  test('SCHEDULE_ENABLED must be a boolean', () => {
    rejects({ PROFILE_SCHEDULE_ENABLED: 'maybe' }, [`${P}PROFILE_SCHEDULE_ENABLED`, 'maybe']);
  });
});

describe('A15: settings without a registered processor', () => {
  test('a built-in prefix without a registered family is rejected, naming the variable', () => {
    rejects({ SKILL_MAX_WORKERS: '2' }, [`${P}SKILL_MAX_WORKERS`, 'SKILL']);
    rejects({ HANDOFF_SCHEDULE_ENABLED: 'true' }, [`${P}HANDOFF_SCHEDULE_ENABLED`, 'HANDOFF']);
    rejects({ MEMORY_SCHEDULE_SECONDS: '60' }, [`${P}MEMORY_SCHEDULE_SECONDS`, 'MEMORY'], registrations('topic-memory', 'profile'));
  });

  test('a custom prefix without a registered family is rejected, naming the variable', () => {
    rejects({ FOO_BAR_MAX_WORKERS: '2' }, [`${P}FOO_BAR_MAX_WORKERS`, 'FOO_BAR']);
    rejects({ FOO_CRON: '0 * * * *' }, [`${P}FOO_CRON`]);
  });

  test('schedule-shaped settings under ARTIFACT_PROCESSING_ are rejected: there is no shared schedule', () => {
    rejects({ ARTIFACT_PROCESSING_SCHEDULE_SECONDS: '60' }, [`${P}ARTIFACT_PROCESSING_SCHEDULE_SECONDS`]);
    rejects({ ARTIFACT_PROCESSING_CRON: '0 * * * *' }, [`${P}ARTIFACT_PROCESSING_CRON`]);
  });

  test('other variables (domain settings, unrelated names) are left alone', () => {
    const c = parseRuntimeConfig(
      { ...env({ PROFILE_MODEL: 'x', TOPIC_MEMORY_WINDOW_LIMIT: '40' }), PATH: '/usr/bin', SKILL_MAX_WORKERS: '3' },
      registrations(),
    );
    assert.equal(c.families.length, 4);
  });
});

describe('A15 / RFC 11: compatibility aliases', () => {
  test("SCHEDULE_SECONDS alone sets memory's interval only and is reported", () => {
    const c = parse({ SCHEDULE_SECONDS: '120' });
    assert.deepEqual(family(c, 'memory').schedule, { kind: 'interval', seconds: 120 });
    assert.deepEqual(family(c, 'topic-memory').schedule, { kind: 'off' });
    assert.deepEqual(family(c, 'experience').schedule, { kind: 'off' });
    assert.equal(family(c, 'profile').schedule.kind, 'off');
    assert.deepEqual(c.aliasesUsed, [{ alias: `${P}SCHEDULE_SECONDS`, target: `${P}MEMORY_SCHEDULE_SECONDS` }]);
    assert.equal(family(c, 'memory').sources.SCHEDULE_SECONDS, `${P}SCHEDULE_SECONDS`);
  });

  test("PROFILE_MAX_CONCURRENCY alone sets profile's worker budget only", () => {
    const c = parse({ PROFILE_MAX_CONCURRENCY: '6' });
    assert.equal(family(c, 'profile').maxWorkers, 6);
    assert.equal(family(c, 'topic-memory').maxWorkers, 4);
    assert.equal(family(c, 'memory').maxWorkers, 3);
    assert.deepEqual(c.aliasesUsed, [{ alias: `${P}PROFILE_MAX_CONCURRENCY`, target: `${P}PROFILE_MAX_WORKERS` }]);
  });

  test("ARTIFACT_PROCESSING_MAX_WORKERS is Topic Memory's budget, not a shared total nor copied to others", () => {
    const c = parse({ ARTIFACT_PROCESSING_MAX_WORKERS: '9' });
    assert.equal(family(c, 'topic-memory').maxWorkers, 9);
    assert.equal(family(c, 'memory').maxWorkers, 3);
    assert.equal(family(c, 'experience').maxWorkers, 2);
    assert.equal(family(c, 'profile').maxWorkers, 5);
    assert.deepEqual(c.aliasesUsed, [{ alias: `${P}ARTIFACT_PROCESSING_MAX_WORKERS`, target: `${P}TOPIC_MEMORY_MAX_WORKERS` }]);
  });

  test("ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS is Topic Memory's timeout only", () => {
    const c = parse({ ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS: '900' });
    assert.equal(family(c, 'topic-memory').workerTimeoutMs, 900_000);
    assert.equal(family(c, 'experience').workerTimeoutMs, 1_800_000);
    assert.equal(family(c, 'memory').workerTimeoutMs, 300_000);
    assert.equal(family(c, 'profile').workerTimeoutMs, 600_000);
    assert.deepEqual(c.aliasesUsed, [{ alias: `${P}ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS`, target: `${P}TOPIC_MEMORY_WORKER_TIMEOUT_SECONDS` }]);
  });

  const PAIRS = [
    { alias: 'SCHEDULE_SECONDS', target: 'MEMORY_SCHEDULE_SECONDS', a: '120', b: '90', read: (c: RuntimeConfig) => family(c, 'memory').schedule },
    { alias: 'PROFILE_MAX_CONCURRENCY', target: 'PROFILE_MAX_WORKERS', a: '6', b: '8', read: (c: RuntimeConfig) => family(c, 'profile').maxWorkers },
    {
      alias: 'ARTIFACT_PROCESSING_MAX_WORKERS',
      target: 'TOPIC_MEMORY_MAX_WORKERS',
      a: '9',
      b: '3',
      read: (c: RuntimeConfig) => family(c, 'topic-memory').maxWorkers,
    },
    {
      alias: 'ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS',
      target: 'TOPIC_MEMORY_WORKER_TIMEOUT_SECONDS',
      a: '900',
      b: '600',
      read: (c: RuntimeConfig) => family(c, 'topic-memory').workerTimeoutMs,
    },
  ];

  for (const { alias, target, a, b, read } of PAIRS) {
    test(`${alias} and ${target}: equal is accepted, different fails naming both`, () => {
      const both = parse({ [alias]: a, [target]: a });
      assert.deepEqual(read(both), read(parse({ [target]: a })));
      assert.deepEqual(both.aliasesUsed, [{ alias: `${P}${alias}`, target: `${P}${target}` }]);
      // The same number written differently is the same setting.
      assert.deepEqual(read(parse({ [alias]: `${a}.0`, [target]: a })), read(both));
      const message = rejects({ [alias]: a, [target]: b }, [`${P}${alias}`, `${P}${target}`]);
      assert.ok(message.includes(a) && message.includes(b), message);
    });

    test(`${alias} with an invalid value names the alias variable`, () => {
      rejects({ [alias]: '-1' }, [`${P}${alias}`]);
    });
  }

  test('an alias whose family is not registered fails instead of being ignored', () => {
    rejects({ SCHEDULE_SECONDS: '60' }, [`${P}SCHEDULE_SECONDS`, 'MEMORY'], registrations('topic-memory', 'experience', 'profile'));
    rejects({ PROFILE_MAX_CONCURRENCY: '2' }, [`${P}PROFILE_MAX_CONCURRENCY`, 'PROFILE'], registrations('memory', 'topic-memory'));
    rejects({ ARTIFACT_PROCESSING_MAX_WORKERS: '2' }, [`${P}ARTIFACT_PROCESSING_MAX_WORKERS`, 'TOPIC_MEMORY'], registrations('memory', 'profile'));
    rejects({ ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS: '60' }, [`${P}ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS`, 'TOPIC_MEMORY'], registrations('memory'));
  });

  test('no alias set: none reported', () => {
    assert.deepEqual(parse({ TOPIC_MEMORY_MAX_WORKERS: '3' }).aliasesUsed, []);
  });
});

describe('effective policies', () => {
  test('budgets and timeouts default from the registration; a registration without defaults gets 2 workers and 600 s', () => {
    const regs = [
      ...registrations(),
      registration('memory', { bindingName: 'x.y', family: 'notes', configPrefix: 'NOTES', defaults: undefined, schedule: { kind: 'interval', seconds: 45 } }),
    ];
    const c = parse({}, regs);
    for (const r of registrations()) {
      const f = family(c, r.family);
      assert.equal(f.maxWorkers, r.defaults!.maxWorkers);
      assert.equal(f.workerTimeoutMs, r.defaults!.workerTimeoutSeconds! * 1000);
      assert.equal(f.registration.bindingName, r.bindingName);
    }
    // A prefix of its own (no legacy keys): the registered schedule applies when unset.
    const notes = family(c, 'notes');
    assert.deepEqual([notes.schedule, notes.maxWorkers, notes.workerTimeoutMs], [{ kind: 'interval', seconds: 45 }, 2, 600_000]);
    rejects({ NOTES_SCHEDULE_SECONDS: '0' }, [`${P}NOTES_SCHEDULE_SECONDS`], regs);
  });

  // RFC 11: the existing period keys keep their names and what turned them off. A PR #1490
  // deployment with automatic Topic processing off has no TOPIC_MEMORY_SCHEDULE_SECONDS (or 0);
  // Profile's cron runs only with PROFILE_SCHEDULE_ENABLED=true.
  test('built-in prefixes: an unset, blank or 0 schedule key is off, never the registered default', () => {
    const regs = [...registrations(), registration('memory', { bindingName: 'skill.import', family: 'skill', configPrefix: 'SKILL' })];
    for (const values of [
      {},
      { TOPIC_MEMORY_SCHEDULE_SECONDS: '0', EXPERIENCE_SCHEDULE_SECONDS: ' ', SCHEDULE_SECONDS: '0', SKILL_SCHEDULE_SECONDS: '0' },
    ] as Array<Record<string, string>>) {
      const c = parse(values, regs);
      for (const name of ['memory', 'topic-memory', 'experience', 'profile', 'skill'])
        assert.deepEqual(family(c, name).schedule, { kind: 'off' }, `${name} with ${JSON.stringify(values)}`);
    }
    // A cron of its own does not enable Profile: enabling is the explicit act.
    assert.deepEqual(family(parse({ PROFILE_CRON: '0 4 * * *' }), 'profile').schedule, { kind: 'off' });
    // Explicit values turn them on.
    const on = parse(
      { TOPIC_MEMORY_SCHEDULE_SECONDS: '300', EXPERIENCE_SCHEDULE_SECONDS: '900', SCHEDULE_SECONDS: '60', PROFILE_SCHEDULE_ENABLED: 'true' },
      regs,
    );
    assert.deepEqual(family(on, 'topic-memory').schedule, { kind: 'interval', seconds: 300 });
    assert.deepEqual(family(on, 'experience').schedule, { kind: 'interval', seconds: 900 });
    assert.deepEqual(family(on, 'memory').schedule, { kind: 'interval', seconds: 60 });
    assert.deepEqual(family(on, 'profile').schedule, { kind: 'cron', expression: '0 2 * * *', timezone: 'Asia/Shanghai' }, 'the registered cron once enabled');
    // _SCHEDULE_ENABLED=true alone enables the registered interval; 0 together with true is a contradiction.
    assert.deepEqual(family(parse({ TOPIC_MEMORY_SCHEDULE_ENABLED: 'true' }), 'topic-memory').schedule, { kind: 'interval', seconds: 300 });
    rejects({ TOPIC_MEMORY_SCHEDULE_ENABLED: 'true', TOPIC_MEMORY_SCHEDULE_SECONDS: '0' }, [
      `${P}TOPIC_MEMORY_SCHEDULE_ENABLED`,
      `${P}TOPIC_MEMORY_SCHEDULE_SECONDS`,
    ]);
  });

  test('cron and time zone from the environment', () => {
    const c = parse({ TOPIC_MEMORY_CRON: '*/5 * * * *', TOPIC_MEMORY_TIMEZONE: 'Europe/Berlin', PROFILE_CRON: '30 3 * * *', PROFILE_SCHEDULE_ENABLED: 'true' });
    assert.deepEqual(family(c, 'topic-memory').schedule, { kind: 'cron', expression: '*/5 * * * *', timezone: 'Europe/Berlin' });
    // A registration that declares a time zone keeps it when only the expression changes.
    assert.deepEqual(family(c, 'profile').schedule, { kind: 'cron', expression: '30 3 * * *', timezone: 'Asia/Shanghai' });
    assert.deepEqual(family(parse({ PROFILE_TIMEZONE: 'UTC', PROFILE_SCHEDULE_ENABLED: 'true' }), 'profile').schedule, {
      kind: 'cron',
      expression: '0 2 * * *',
      timezone: 'UTC',
    });
  });

  test('an interval from the environment replaces a registered cron', () => {
    assert.deepEqual(family(parse({ PROFILE_SCHEDULE_SECONDS: '3600', PROFILE_SCHEDULE_ENABLED: 'true' }), 'profile').schedule, {
      kind: 'interval',
      seconds: 3600,
    });
  });

  test('SCHEDULE_ENABLED=false turns the schedule off; true keeps it', () => {
    for (const off of ['false', 'FALSE', '0', 'no']) {
      const c = parse({ PROFILE_SCHEDULE_ENABLED: off, TOPIC_MEMORY_SCHEDULE_ENABLED: off });
      assert.deepEqual(family(c, 'profile').schedule, { kind: 'off' });
      assert.deepEqual(family(c, 'topic-memory').schedule, { kind: 'off' });
      assert.deepEqual(family(c, 'experience').schedule, { kind: 'off' }, 'unset: off (legacy)');
    }
    const on = parse({ PROFILE_SCHEDULE_ENABLED: 'true', PROFILE_CRON: '0 4 * * *', PROFILE_TIMEZONE: 'Asia/Shanghai' });
    assert.deepEqual(family(on, 'profile').schedule, { kind: 'cron', expression: '0 4 * * *', timezone: 'Asia/Shanghai' });
  });

  test('the RFC example of a Profile configuration', () => {
    const c = parse({
      PROFILE_SCHEDULE_ENABLED: 'true',
      PROFILE_CRON: '0 2 * * *',
      PROFILE_TIMEZONE: 'Asia/Shanghai',
      PROFILE_MAX_WORKERS: '4',
      PROFILE_WORKER_TIMEOUT_SECONDS: '600',
      ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'dedicated',
    });
    const p = family(c, 'profile');
    assert.deepEqual(
      [c.mode, p.schedule, p.maxWorkers, p.workerTimeoutMs],
      ['dedicated', { kind: 'cron', expression: '0 2 * * *', timezone: 'Asia/Shanghai' }, 4, 600_000],
    );
  });

  test('tuning defaults', () => {
    const c = parse({});
    assert.deepEqual(
      [c.leaseTtlMs, c.renewEveryMs, c.pollEveryMs, c.retryBaseMs, c.retryMaxMs, c.conflictRetryMs, c.readyQueueSize, c.scanPageSize],
      [15_000, 5_000, 5_000, 30_000, 1_800_000, 2_000, 64, 500],
    );
    assert.equal(c.warmWorkers, 1, 'one warm worker per family by default');
  });

  test('WARM_WORKERS: 0 turns warm workers off; negative or fractional values are rejected naming the variable', () => {
    assert.equal(parse({ ARTIFACT_PROCESSING_WARM_WORKERS: '0' }).warmWorkers, 0);
    assert.equal(parse({ ARTIFACT_PROCESSING_WARM_WORKERS: '3' }).warmWorkers, 3);
    for (const bad of ['-1', '1.5', 'many']) rejects({ ARTIFACT_PROCESSING_WARM_WORKERS: bad }, [`${P}ARTIFACT_PROCESSING_WARM_WORKERS`]);
  });

  test('tuning variables are read and validated, naming the variable', () => {
    const c = parse({
      ARTIFACT_PROCESSING_RETRY_BASE_SECONDS: '0.5',
      ARTIFACT_PROCESSING_RETRY_MAX_SECONDS: '4',
      ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '3',
      ARTIFACT_PROCESSING_RENEW_SECONDS: '1',
      ARTIFACT_PROCESSING_SCAN_PAGE_SIZE: '5000',
    });
    assert.deepEqual([c.retryBaseMs, c.retryMaxMs, c.leaseTtlMs, c.renewEveryMs, c.scanPageSize], [500, 4000, 3000, 1000, 5000]);
    for (const bad of ['0', '-2', 'soon']) rejects({ ARTIFACT_PROCESSING_RETRY_BASE_SECONDS: bad }, [`${P}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`]);
    rejects({ ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '0.5' }, [`${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`]);
    rejects({ ARTIFACT_PROCESSING_RENEW_SECONDS: '15' }, [`${P}ARTIFACT_PROCESSING_RENEW_SECONDS`, `${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`]);
    rejects({ ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '10', ARTIFACT_PROCESSING_RENEW_SECONDS: '12' }, [
      `${P}ARTIFACT_PROCESSING_RENEW_SECONDS`,
      `${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`,
    ]);
    rejects({ ARTIFACT_PROCESSING_RETRY_BASE_SECONDS: '60', ARTIFACT_PROCESSING_RETRY_MAX_SECONDS: '30' }, [
      `${P}ARTIFACT_PROCESSING_RETRY_MAX_SECONDS`,
      `${P}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`,
    ]);
    // Page and queue sizes are whole numbers; the page operations accept at most 5000 keys.
    rejects({ ARTIFACT_PROCESSING_SCAN_PAGE_SIZE: '6000' }, [`${P}ARTIFACT_PROCESSING_SCAN_PAGE_SIZE`, '5000']);
    rejects({ ARTIFACT_PROCESSING_SCAN_PAGE_SIZE: '1.5' }, [`${P}ARTIFACT_PROCESSING_SCAN_PAGE_SIZE`]);
    rejects({ ARTIFACT_PROCESSING_READY_QUEUE_SIZE: '0' }, [`${P}ARTIFACT_PROCESSING_READY_QUEUE_SIZE`]);
  });

  test('the loggable description carries the policies and aliases but never the connection string', () => {
    const c = parse({
      DATABASE_URL: 'mysql://app:hunter2secret@db.internal:3306/pc',
      ARTIFACT_PROCESSING_ROLE: 'background',
      ARTIFACT_PROCESSING_MAX_WORKERS: '6',
    });
    const d = describeConfig(c);
    const text = JSON.stringify(d);
    assert.doesNotMatch(text, /hunter2secret/);
    assert.doesNotMatch(text, /db\.internal/);
    assert.equal(d.backend, 'mysql');
    assert.equal(d.role, 'background');
    assert.deepEqual(d.aliasesUsed, [{ alias: `${P}ARTIFACT_PROCESSING_MAX_WORKERS`, target: `${P}TOPIC_MEMORY_MAX_WORKERS` }]);
    assert.deepEqual(
      (d.families as Array<{ family: string; maxWorkers: number }>).map((f) => [f.family, f.maxWorkers]),
      [
        ['memory', 3],
        ['topic-memory', 6],
        ['experience', 2],
        ['profile', 5],
      ],
    );
  });
});

// Values the code below cannot honour are refused at start-up, naming the variable: a timer
// above 2^31-1 ms fires after 1 ms in Node (every invocation would time out at once), and
// pc_aps_acquire_term refuses a TTL above 3600 s (the process would never lead).
describe('A15: bounds the runtime can honour', () => {
  test('worker timeout up to 2,147,483 s; above it is refused (also through the alias)', () => {
    assert.equal(family(parse({ TOPIC_MEMORY_WORKER_TIMEOUT_SECONDS: '2147483' }), 'topic-memory').workerTimeoutMs, 2_147_483_000);
    rejects({ TOPIC_MEMORY_WORKER_TIMEOUT_SECONDS: '2147484' }, [`${P}TOPIC_MEMORY_WORKER_TIMEOUT_SECONDS`, '2147483']);
    rejects({ ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS: '99999999' }, [`${P}ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS`]);
  });

  test('lease TTL up to 3600 s, as the acquisition procedure accepts', () => {
    assert.equal(parse({ ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '3600' }).leaseTtlMs, 3_600_000);
    rejects({ ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '3601' }, [`${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`, '3600']);
  });

  test('every numeric setting has an upper bound', () => {
    const huge = '99999999999';
    for (const key of [
      'RENEW_SECONDS',
      'POLL_SECONDS',
      'RETRY_BASE_SECONDS',
      'RETRY_MAX_SECONDS',
      'CONFLICT_RETRY_SECONDS',
      'READY_QUEUE_SIZE',
      'TERMINATE_GRACE_SECONDS',
      'DISCOVERY_TIMEOUT_SECONDS',
      'WARM_WORKERS',
    ]) {
      rejects({ [`ARTIFACT_PROCESSING_${key}`]: huge }, [`${P}ARTIFACT_PROCESSING_${key}`, 'at most']);
    }
    rejects({ TOPIC_MEMORY_MAX_WORKERS: '1001' }, [`${P}TOPIC_MEMORY_MAX_WORKERS`, 'at most 1000']);
    rejects({ TOPIC_MEMORY_SCHEDULE_SECONDS: '2147483648' }, [`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`, 'at most']);
    rejects({ PROFILE_MAX_CONCURRENCY: '5000' }, [`${P}PROFILE_MAX_CONCURRENCY`]);
  });

  test('hex, exponent, signed and other non-decimal forms are refused', () => {
    for (const bad of ['0x10', '0X10', '1e3', '0b11', '0o17', '+5', ' 1_000', '1,5', '.5', '5.']) {
      rejects({ TOPIC_MEMORY_MAX_WORKERS: bad }, [`${P}TOPIC_MEMORY_MAX_WORKERS`]);
      rejects({ ARTIFACT_PROCESSING_POLL_SECONDS: bad }, [`${P}ARTIFACT_PROCESSING_POLL_SECONDS`]);
    }
    rejects({ TOPIC_MEMORY_SCHEDULE_SECONDS: '0x0' }, [`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`]);
    // The durable-task settings too (src/tasks/config.ts).
    assert.throws(
      () => parseTaskConfig({ [`${P}DURABLE_TASK_CAPACITY`]: '0x10' }),
      (e: unknown) => e instanceof ConfigError && e.message.includes(`${P}DURABLE_TASK_CAPACITY`),
    );
    assert.equal(parseTaskConfig({ [`${P}DURABLE_TASK_CAPACITY`]: '16' }).capacity, 16);
    assert.equal(parse({ ARTIFACT_PROCESSING_POLL_SECONDS: '0.25' }).pollEveryMs, 250);
    assert.equal(family(parse({ TOPIC_MEMORY_MAX_WORKERS: '007' }), 'topic-memory').maxWorkers, 7);
  });

  test('a POWERCONTEXT_SERVER_RUNTIME_ variable nothing reads is reported with the closest known name', () => {
    const c = parse({ TOPIC_MEMORY_MAX_WORKRES: '3', ARTIFACT_PROCESSING_LEASE_TTL: '30', DATABASE_URL: MYSQL, TOPIC_MEMORY_MAX_WORKERS: '3' });
    assert.deepEqual(c.unknownVariables, [
      { variable: `${P}ARTIFACT_PROCESSING_LEASE_TTL`, closest: `${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS` },
      { variable: `${P}TOPIC_MEMORY_MAX_WORKRES`, closest: `${P}TOPIC_MEMORY_MAX_WORKERS` },
    ]);
    // Known names are not reported: runtime, tasks, observability, a family's declared settings.
    const regs = [registration('topic-memory', { settings: ['TOPIC_MEMORY_WINDOW_LIMIT'] }), registration('profile')];
    const quiet = parse(
      {
        DATABASE_URL: MYSQL,
        OBSERVABILITY_ADDRESS: 'localhost:0',
        DURABLE_TASK_CAPACITY: '4',
        TASKS_MODULE: '/x.ts',
        TOPIC_MEMORY_WINDOW_LIMIT: '40',
        PROFILE_CRON: '0 3 * * *',
      },
      regs,
    );
    assert.deepEqual(quiet.unknownVariables, []);
    assert.deepEqual(
      parse({ PROFILE_MODEL: 'x' }, regs).unknownVariables.map((u) => u.variable),
      [`${P}PROFILE_MODEL`],
    );
  });
});

describe('RFC 6, A13/A14: the trusted background principal', () => {
  test('defaults to apsup-background:{family}, the id processors received before the setting', () => {
    const c = parse({});
    assert.equal(c.trustedPrincipalId, 'apsup-background:{family}');
    assert.equal(describeConfig(c).trustedPrincipalId, 'apsup-background:{family}');
  });

  test('takes the configured id; blank is the default', () => {
    assert.equal(parse({ TRUSTED_PRINCIPAL_ID: ' svc:runtime/{family} ' }).trustedPrincipalId, 'svc:runtime/{family}');
    assert.equal(parse({ TRUSTED_PRINCIPAL_ID: '  ' }).trustedPrincipalId, 'apsup-background:{family}');
  });

  test('a bad id fails start-up in one line naming the variable and the allowed form', () => {
    for (const value of ['svc runtime', "svc'x", '{familly}', 'x'.repeat(201)]) {
      const message = rejects({ TRUSTED_PRINCIPAL_ID: value }, [`${P}TRUSTED_PRINCIPAL_ID`, 'letters, digits and . _ : @ / + -', '{family}']);
      assert.equal(message.includes('\n'), false, message);
    }
  });

  test('is a known variable (no unknown-variable warning)', () => {
    assert.deepEqual(parse({ TRUSTED_PRINCIPAL_ID: 'svc:x' }).unknownVariables, []);
  });
});
