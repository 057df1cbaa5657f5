// Family and scope pages: the binding's scan checkpoint (RFC 4), backlog, owed keys with their
// generations (RFC 3), in-memory backoff (RFC 7) and recent invocations when mounted in
// `apsup run`, and the trigger / mark-dirty actions.
import { h, kv, link, num, panel, pill, relative, replace, table, td, time } from './dom.js';

const gens = (k) => [num(`${k.requestedGeneration} / ${k.handledGeneration}`), num(`${k.dirtyGeneration} / ${k.cleanGeneration}`)];

function intentActions(ctx, family, scopeId) {
  const path = (what) => `/api/families/${encodeURIComponent(family)}/scopes/${encodeURIComponent(scopeId)}/${what}`;
  return h(
    'span',
    { class: 'row-actions' },
    h(
      'button',
      {
        class: 'btn btn-sm',
        onclick: () =>
          ctx.act({
            title: 'Trigger scope',
            message: `Accept an explicit request for ${family} / ${scopeId} (requested generation + 1).`,
            verb: 'Trigger',
            path: path('trigger'),
          }),
      },
      'Trigger',
    ),
    h(
      'button',
      {
        class: 'btn btn-sm btn-ghost',
        onclick: () =>
          ctx.act({
            title: 'Mark dirty',
            message: `Mark ordinary work for ${family} / ${scopeId} (dirty generation + 1).`,
            verb: 'Mark dirty',
            path: path('mark-dirty'),
          }),
      },
      'Mark dirty',
    ),
  );
}

/** The scope form: built once per page (its input keeps its text across polls). */
function scopeForm(ctx, family) {
  const input = h('input', { type: 'text', placeholder: 'scope id', 'aria-label': 'scope id', id: 'scope-input', maxlength: 191 });
  const go = (what) => {
    const scopeId = input.value;
    if (!scopeId.trim()) return ctx.toast('enter a scope id first', 'bad');
    if (what === 'open') location.hash = `#/families/${encodeURIComponent(family)}/scopes/${encodeURIComponent(scopeId)}`;
    else
      ctx.act({
        title: what === 'trigger' ? 'Trigger scope' : 'Mark dirty',
        message: `${what === 'trigger' ? 'Accept an explicit request for' : 'Mark ordinary work for'} ${family} / ${scopeId}.`,
        verb: what === 'trigger' ? 'Trigger' : 'Mark dirty',
        path: `/api/families/${encodeURIComponent(family)}/scopes/${encodeURIComponent(scopeId)}/${what}`,
      });
  };
  return h(
    'form',
    {
      class: 'inline-form',
      onsubmit: (e) => {
        e.preventDefault();
        go('open');
      },
    },
    input,
    h('button', { class: 'btn', type: 'submit' }, 'Open'),
    h('button', { class: 'btn', type: 'button', onclick: () => go('trigger') }, 'Trigger'),
    h('button', { class: 'btn btn-ghost', type: 'button', onclick: () => go('mark-dirty') }, 'Mark dirty'),
  );
}

function backoffTable(list, dbNow, family) {
  return table(
    ['scope', { text: 'failures', class: 'num' }, 'retry at', 'reason', 'last error'],
    list.map((b) =>
      h(
        'tr',
        {},
        td(family ? link(['families', family, 'scopes', b.scopeId], b.scopeId, { class: 'mono' }) : h('code', {}, b.scopeId)),
        num(b.consecutiveFailures),
        td([time(b.nextRetryAt), ' ', h('span', { class: 'dim' }, relative(b.nextRetryAt, dbNow))]),
        td(pill(b.reason, b.reason === 'conflict' ? 'info' : 'bad')),
        td(b.message ? h('span', { class: 'error-text' }, b.message) : '–'),
      ),
    ),
    'no scope is backing off',
  );
}

function invocationsTable(list, family) {
  return table(
    ['at', 'scope', 'outcome', { text: 'generation', class: 'num' }, { text: 'duration', class: 'num' }, 'worker', 'error'],
    list.map((r) =>
      h(
        'tr',
        {},
        td(time(r.at)),
        td(link(['families', family, 'scopes', r.scopeId], r.scopeId, { class: 'mono' })),
        td(pill(r.status, r.status === 'ok' || r.status === 'already_handled' ? 'ok' : r.status === 'conflict' ? 'info' : 'bad')),
        num(r.requestGeneration),
        num(`${r.durationMs} ms`),
        td(h('code', {}, r.workerId)),
        td(r.error ? h('span', { class: 'error-text' }, r.error) : '–'),
      ),
    ),
    'no invocation since this host started',
  );
}

/** Keyset paging of one key list: back to the first page, or on after the last sequence shown. */
function pager(ctx, cursor, name, next) {
  return h(
    'div',
    { class: 'pager' },
    cursor[name] > 0
      ? h(
          'button',
          {
            class: 'btn btn-sm',
            onclick: () => {
              cursor[name] = 0;
              ctx.refresh();
            },
          },
          '← First page',
        )
      : null,
    next
      ? h(
          'button',
          {
            class: 'btn btn-sm',
            onclick: () => {
              cursor[name] = next;
              ctx.refresh();
            },
          },
          'Next page →',
        )
      : null,
  );
}

const hostOnly = () =>
  h(
    'p',
    { class: 'hint' },
    'Kept in the host’s memory only (RFC 7): shown when the console is mounted in apsup run (POWERCONTEXT_SERVER_RUNTIME_CONSOLE_ADDRESS).',
  );

export function familyView(family) {
  const cursor = { after: 0, dirtyAfter: 0 };
  return {
    api: () => `/api/families/${encodeURIComponent(family)}?after=${cursor.after}&dirtyAfter=${cursor.dirtyAfter}&limit=100`,
    mount(root, ctx) {
      const body = h('div', { class: 'page' });
      root.append(h('div', { class: 'page-head' }, h('h1', {}, h('span', { class: 'dim' }, 'family '), family), scopeForm(ctx, family)), body);
      return {
        update(f) {
          const s = f.scan;
          const rowsOf = (keys) =>
            keys.map((k) =>
              h(
                'tr',
                {},
                td(link(['families', family, 'scopes', k.scopeId], k.scopeId, { class: 'mono' })),
                num(k.pendingSequence),
                ...gens(k),
                td(intentActions(ctx, family, k.scopeId)),
              ),
            );
          const keysTable = (page, name, empty) =>
            h(
              'div',
              {},
              table(
                ['scope', { text: 'sequence', class: 'num' }, { text: 'requested / handled', class: 'num' }, { text: 'dirty / clean', class: 'num' }, ''],
                rowsOf(page.keys),
                empty,
              ),
              pager(ctx, cursor, name, page.nextAfterSequence),
            );
          replace(
            body,
            h(
              'div',
              { class: 'cols' },
              panel(
                'Schedule and scan checkpoint',
                kv([
                  ['binding', h('code', {}, f.binding)],
                  ['schedule', f.schedule],
                  ['last checkpoint', time(s.lastScheduleCheckpointAt)],
                  ['next due', s.nextDueAt ? [time(s.nextDueAt), ' ', h('span', { class: 'dim' }, relative(s.nextDueAt, f.dbNow))] : '–'],
                  ['scan generation', String(s.scanGeneration)],
                  ['scan', s.scanInProgress ? pill('in progress', 'accent') : pill('finished', 'muted')],
                  ['scan upper sequence', s.scanUpperPendingSequence === null ? '–' : String(s.scanUpperPendingSequence)],
                  ['scan started / finished', [time(s.scanStartedAt), ' / ', time(s.scanFinishedAt)]],
                ]),
              ),
              panel(
                'Budget and backlog',
                kv([
                  ['owed invocations', `${f.backlog.owed >= f.backlog.countCap ? '≥' : ''}${f.backlog.owed}`],
                  ['dirty scopes', `${f.backlog.ordinary >= f.backlog.countCap ? '≥' : ''}${f.backlog.ordinary}`],
                  ['budget', f.stats ? `${f.stats.running} running / ${f.maxWorkers} max` : `${f.maxWorkers} max workers`],
                  f.stats ? ['ready / backing off', `${f.stats.ready} / ${f.stats.retryWait}`] : null,
                  f.stats ? ['health', f.stats.health === 'ok' ? pill('ok', 'ok') : pill('degraded', 'bad')] : null,
                  f.stats?.lastError ? ['last error', h('span', { class: 'error-text' }, f.stats.lastError)] : null,
                  ['worker timeout', `${f.workerTimeoutSeconds} s`],
                ]),
              ),
            ),
            h(
              'div',
              { class: 'cols' },
              panel('Owed invocations (requested > handled)', keysTable(f.owed, 'after', 'no invocation owed')),
              panel('Ordinary work (dirty > clean)', keysTable(f.dirty, 'dirtyAfter', 'no dirty scope')),
            ),
            panel('Backoff', f.live ? backoffTable(f.backoff, f.dbNow, family) : hostOnly()),
            panel('Recent invocations', f.live ? invocationsTable(f.invocations, family) : hostOnly()),
          );
        },
      };
    },
  };
}

export function scopeView(family, scopeId) {
  return {
    api: () => `/api/families/${encodeURIComponent(family)}/scopes/${encodeURIComponent(scopeId)}`,
    mount(root, ctx) {
      const body = h('div', { class: 'page' });
      root.append(
        h(
          'div',
          { class: 'page-head' },
          h('h1', {}, link(['families', family], family), h('span', { class: 'dim' }, ' / scope '), h('span', { class: 'mono' }, scopeId)),
          intentActions(ctx, family, scopeId),
        ),
        body,
      );
      return {
        update(s) {
          const i = s.intent;
          replace(
            body,
            panel(
              'Intent',
              i
                ? kv([
                    ['pending sequence', String(i.pendingSequence)],
                    ['requested / handled', [`${i.requestedGeneration} / ${i.handledGeneration} `, i.owed ? pill('owed', 'warn') : pill('handled', 'ok')]],
                    ['dirty / clean', [`${i.dirtyGeneration} / ${i.cleanGeneration} `, i.dirty ? pill('dirty', 'info') : pill('clean', 'ok')]],
                    ['last auto-scan generation', String(i.lastAutoScanGeneration ?? '–')],
                  ])
                : h('p', { class: 'hint' }, 'This scope has no intent yet: it was never marked dirty or triggered.'),
            ),
            panel(
              'Backoff',
              s.live ? (s.backoff ? backoffTable([s.backoff], new Date().toISOString()) : h('p', { class: 'hint' }, 'not backing off')) : hostOnly(),
            ),
            panel('Recent invocations', s.live ? invocationsTable(s.invocations, family) : hostOnly()),
          );
        },
      };
    },
  };
}
