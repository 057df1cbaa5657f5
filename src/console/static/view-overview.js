// Overview: terms and their history, the deployment's state, every family's schedule, backlog
// and budget, durable tasks by state and type, and sparklines of the console's samples.
import { h, kv, link, num, panel, pill, relative, replace, statePill, table, td, time } from './dom.js';

function spark(label, values, unit = '') {
  const el = document.createElement('aps-sparkline');
  el.setAttribute('label', label);
  el.values = values ?? [];
  const last = [...(values ?? [])].reverse().find((v) => typeof v === 'number');
  return h(
    'div',
    { class: 'spark-card' },
    h('div', { class: 'spark-head' }, h('span', {}, label), h('strong', {}, last === undefined ? '–' : `${last}${unit}`)),
    el,
  );
}

function terms(o) {
  const rows = o.supervisors
    .filter((s) => s.active || s.holderId !== null || s.supervisorGeneration > 0)
    .map((s) =>
      h(
        'tr',
        { class: s.active ? '' : 'inactive' },
        td(h('code', {}, s.supervisorKey)),
        td(s.mode),
        // A SQLite term has no expiry: it is live while its host process holds the host lock.
        td(s.live ? pill('live', 'ok') : s.holderId ? pill(s.expiresAt ? 'expired' : 'host not running', 'warn') : pill('free', 'muted')),
        td(s.holderId ? h('code', {}, s.holderId) : h('span', { class: 'dim' }, '–')),
        num(s.supervisorGeneration),
        td(
          s.expiresAt
            ? [time(s.expiresAt), ' ', h('span', { class: 'dim' }, relative(s.expiresAt, o.dbNow))]
            : h('span', { class: 'dim', title: 'SQLite terms have no expiry: live while the host holds the host lock' }, s.holderId ? 'none (SQLite)' : '–'),
        ),
      ),
    );
  const host = o.sqliteHost
    ? kv([['SQLite host', o.sqliteHost.pid === null ? 'none' : `pid ${o.sqliteHost.pid} (${o.sqliteHost.alive ? 'running' : 'dead: stale lock'})`]])
    : null;
  return panel(
    'Supervisor terms',
    table(['supervisor key', 'mode', 'lease', 'holder', { text: 'generation', class: 'num' }, 'expires'], rows, 'no term taken yet'),
    host,
  );
}

function history(o) {
  const rows = o.termHistory
    .slice(0, 8)
    .map((c) =>
      h(
        'tr',
        {},
        td(time(c.observedAt)),
        td(h('code', {}, c.supervisorKey)),
        td(pill(c.kind.replace('_', ' '), c.kind === 'takeover' ? 'warn' : c.kind === 'invalidated' ? 'muted' : 'info')),
        td(c.fromHolderId ? h('code', {}, c.fromHolderId) : '–'),
        td(c.toHolderId ? h('code', {}, c.toHolderId) : '–'),
        num(c.fromGeneration === null ? `${c.toGeneration}` : `${c.fromGeneration} → ${c.toGeneration}`),
      ),
    );
  return panel(
    'Term changes seen',
    table(['seen at', 'key', 'change', 'from holder', 'to holder', { text: 'gen', class: 'num' }], rows, 'none seen since this console started'),
  );
}

function families(o) {
  const rows = o.families.map((f) => {
    const live = f.live;
    const budget = live ? `${live.running} / ${live.budget}` : `max ${f.maxWorkers ?? '?'}`;
    return h(
      'tr',
      {},
      td(link(['families', f.family], f.family, { class: 'strong' })),
      td(f.schedule),
      td(f.nextDueAt ? [time(f.nextDueAt), ' ', h('span', { class: 'dim' }, relative(f.nextDueAt, o.dbNow))] : '–'),
      td(f.scanInProgress ? pill(`scan ${f.scanGeneration} running`, 'accent') : h('span', { class: 'dim' }, `scan ${f.scanGeneration}`)),
      num(f.owedInvocations >= o.countCap ? `≥${f.owedInvocations}` : f.owedInvocations),
      num(f.ordinaryBacklog >= o.countCap ? `≥${f.ordinaryBacklog}` : f.ordinaryBacklog),
      num(budget),
      num(live ? live.retryWait : '–'),
      td(
        live
          ? live.health === 'ok'
            ? pill('ok', 'ok')
            : pill('degraded', 'bad')
          : h('span', { class: 'dim', title: 'kept by the host: mount the console in apsup run' }, 'n/a'),
      ),
      td(live?.lastError ? h('span', { class: 'error-text' }, live.lastError) : h('span', { class: 'dim' }, '–')),
    );
  });
  return panel(
    'Families',
    table(
      [
        'family',
        'schedule',
        'next due',
        'scan',
        { text: 'owed', class: 'num' },
        { text: 'dirty', class: 'num' },
        { text: 'budget', class: 'num' },
        { text: 'backing off', class: 'num' },
        'health',
        'last error',
      ],
      rows,
      'no families registered',
    ),
  );
}

function tasks(o) {
  const rows = o.tasks.counts.map((c) => h('tr', {}, td(h('code', {}, c.taskType)), td(statePill(c.state)), num(c.n)));
  return panel(
    'Durable tasks',
    h(
      'div',
      { class: 'stats' },
      h('div', { class: 'stat' }, h('span', {}, 'pending'), h('strong', {}, String(o.tasks.pending))),
      h('div', { class: 'stat' }, h('span', {}, 'running'), h('strong', {}, String(o.tasks.running))),
      h('div', { class: 'stat' }, h('span', {}, 'live task workers'), h('strong', {}, String(o.tasks.liveWorkers))),
      h('div', { class: 'stat' }, h('span', {}, 'claim cap in use'), h('strong', {}, `${o.tasks.claimsRunning ?? '?'} / ${o.tasks.claimCap ?? '?'}`)),
      link(['tasks'], 'all tasks →', { class: 'more' }),
    ),
    table(['type', 'state', { text: 'active', class: 'num' }], rows, 'no active task'),
  );
}

function failures(o) {
  const rows = o.tasks.recentFailures.map((f) =>
    h(
      'tr',
      {},
      num(link(['tasks', f.taskId], `#${f.taskId}`)),
      td(h('code', {}, f.taskType)),
      td(time(f.finishedAt)),
      td([h('code', { class: 'error-code' }, f.errorCode ?? 'error'), ' ', h('span', { class: 'error-text' }, f.errorMessage ?? '')]),
    ),
  );
  return panel('Latest failed tasks', table([{ text: 'id', class: 'num' }, 'type', 'failed at', 'error'], rows, 'no failed task'));
}

function deployment(o) {
  return panel(
    'Deployment',
    kv([
      ['backend', `${o.backend}`],
      ['database', h('code', {}, o.database)],
      ['mode', o.mode ?? 'not recorded yet (no runtime started)'],
      ['maintenance', o.maintenance ? pill('ON: intents and starts refused', 'warn') : pill('off', 'ok')],
      [
        'schema',
        o.schema.checked
          ? o.schema.drift
            ? pill('drift', 'bad')
            : o.schema.pending
              ? pill(`${o.schema.pending} pending`, 'warn')
              : pill('up to date', 'ok')
          : h('span', { class: 'dim' }, o.schema.reason),
      ],
      o.schema.problems.length
        ? [
            'schema problems',
            h(
              'ul',
              { class: 'plain' },
              o.schema.problems.map((p) => h('li', {}, p)),
            ),
          ]
        : null,
      o.host
        ? ['this host', `role ${o.host.role}, holder ${o.host.holderId}`]
        : ['this host', h('span', { class: 'dim' }, 'stand-alone console: budget, backoff and invocations show when mounted in apsup run')],
    ]),
  );
}

/** Built once (inputs keep their text across polls); `state.on` follows the polled maintenance flag. */
function controls(ctx, state) {
  const maintenance = h('button', { class: 'btn', id: 'maintenance-toggle' }, 'Maintenance');
  maintenance.addEventListener('click', () => {
    const on = state.on;
    ctx.act({
      title: on ? 'End maintenance' : 'Start maintenance',
      message: on
        ? 'Dirty marks, explicit triggers and runtime starts will be accepted again.'
        : 'Dirty marks, explicit triggers and runtime starts will be refused until maintenance ends (RFC 9).',
      verb: on ? 'Maintenance off' : 'Maintenance on',
      path: '/api/maintenance',
      body: { on: !on },
      danger: !on,
    });
  });
  const capacity = h('input', { type: 'number', min: 1, max: 10000, placeholder: '4', class: 'narrow', id: 'capacity', 'aria-label': 'task claim cap' });
  const setCap = h('button', { class: 'btn' }, 'Set claim cap');
  setCap.addEventListener('click', () => {
    const n = Number(capacity.value);
    ctx.act({
      title: 'Set the task claim cap',
      message: `At most ${n} durable tasks will run at once across every process (ADR T6).`,
      verb: 'Set capacity',
      path: '/api/tasks/capacity',
      body: { capacity: n },
      done: (r) => ctx.toast(`claim cap ${r.previousCapacity ?? '?'} → ${r.capacity} (${r.running} running)`, 'ok'),
    });
  });
  state.render = () => {
    maintenance.textContent = state.on ? 'End maintenance' : 'Start maintenance';
    maintenance.className = state.on ? 'btn' : 'btn btn-warn';
  };
  return panel(
    'Controls',
    h('div', { class: 'actions' }, maintenance, h('span', { class: 'sep' }), capacity, setCap),
    h('p', { class: 'hint' }, 'Actions need the operator token (top right) and are confirmed before they are sent.'),
  );
}

function sparks(o) {
  const s = o.series;
  return h(
    'div',
    { class: 'sparks' },
    spark('owed invocations', s.owed),
    spark('dirty scopes', s.backlog),
    spark('tasks pending', s.tasksPending),
    spark('tasks running', s.tasksRunning),
    o.host ? spark('invocations', s.invocations) : null,
    o.host ? spark('failures', s.failures) : null,
    o.host ? spark('latency', s.latencyMs, ' ms') : null,
  );
}

export function overviewView() {
  return {
    api: null,
    mount(root, ctx) {
      const state = { on: false };
      const slots = { sparks: h('div'), terms: h('div'), deployment: h('div'), families: h('div'), tasks: h('div'), failures: h('div'), history: h('div') };
      root.append(
        h('div', { class: 'page-head' }, h('h1', {}, 'Overview')),
        h(
          'div',
          { class: 'page' },
          slots.sparks,
          h('div', { class: 'cols' }, slots.terms, h('div', { class: 'stack' }, slots.deployment, controls(ctx, state))),
          slots.families,
          h('div', { class: 'cols' }, slots.tasks, h('div', { class: 'stack' }, slots.failures, slots.history)),
        ),
      );
      return {
        update(o) {
          state.on = o.maintenance;
          state.render();
          replace(slots.sparks, sparks(o));
          replace(slots.terms, terms(o));
          replace(slots.deployment, deployment(o));
          replace(slots.families, families(o));
          replace(slots.tasks, tasks(o));
          replace(slots.failures, failures(o));
          replace(slots.history, history(o));
        },
      };
    },
  };
}
