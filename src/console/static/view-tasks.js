// Durable tasks: the list with state / type / time filters and keyset paging (as `apsup tasks
// list`), and one task in full with cancel / resume / delete (ADR T7; resume of a failed task).
import { h, json, kv, link, num, panel, pill, replace, statePill, table, td, time } from './dom.js';

const STATES = ['', 'pending', 'running', 'succeeded', 'failed', 'cancelled'];

function progress(t) {
  if (t.progressCurrent === null) return h('span', { class: 'dim' }, '–');
  return h(
    'span',
    { class: 'progress' },
    t.progressTotal ? h('progress', { max: t.progressTotal, value: Math.min(t.progressCurrent, t.progressTotal) }) : null,
    `${t.progressCurrent}/${t.progressTotal ?? '?'}`,
  );
}

function taskActions(ctx, t, after) {
  const act = (verb, what, message, danger) =>
    h(
      'button',
      {
        class: `btn btn-sm${danger ? ' btn-danger' : ''}`,
        'data-action': what,
        onclick: () => ctx.act({ title: `${verb} ${t.taskId}`, message, verb, path: `/api/tasks/${t.taskId}/${what}`, danger, done: after?.[what] }),
      },
      verb.replace(' task', ''),
    );
  return h(
    'span',
    { class: 'row-actions' },
    t.state === 'pending' || (t.state === 'running' && !t.cancelRequested)
      ? act(
          'Cancel task',
          'cancel',
          t.state === 'pending'
            ? 'The pending task is cancelled at once.'
            : 'The cancel is recorded; the running task ends after its handler’s cleanup point (ADR T7).',
          true,
        )
      : null,
    t.state === 'failed' ? act('Resume task', 'resume', 'A new task continues this one (explicit resume, for task types that declare it).') : null,
    ['succeeded', 'failed', 'cancelled'].includes(t.state) ? act('Delete task', 'delete', 'The terminal task row is deleted.', true) : null,
  );
}

export function tasksView(params) {
  const query = { state: params.get('state') ?? '', type: params.get('type') ?? '', since: params.get('since') ?? '' };
  const cursors = [];
  let before = params.get('before') ?? '';
  const api = () => {
    const q = new URLSearchParams(Object.entries({ ...query, before, limit: '50' }).filter(([, v]) => v));
    return `/api/tasks?${q}`;
  };
  return {
    api,
    mount(root, ctx) {
      const state = h(
        'select',
        { 'aria-label': 'state', id: 'filter-state' },
        STATES.map((s) => h('option', { value: s, selected: s === query.state }, s || 'any state')),
      );
      const type = h('input', { type: 'text', placeholder: 'task type', value: query.type, 'aria-label': 'task type', id: 'filter-type' });
      const since = h('input', {
        type: 'datetime-local',
        value: query.since ? query.since.slice(0, 16) : '',
        'aria-label': 'created since',
        id: 'filter-since',
      });
      const apply = (e) => {
        e.preventDefault();
        const q = new URLSearchParams(
          Object.entries({ state: state.value, type: type.value.trim(), since: since.value ? new Date(since.value).toISOString() : '' }).filter(([, v]) => v),
        );
        location.hash = `#/tasks${q.size ? `?${q}` : ''}`;
      };
      const list = h('div');
      const pager = h('div', { class: 'pager' });
      root.append(
        h(
          'div',
          { class: 'page-head' },
          h('h1', {}, 'Durable tasks'),
          h(
            'form',
            { class: 'inline-form', onsubmit: apply },
            state,
            type,
            h('label', { class: 'dim' }, 'since'),
            since,
            h('button', { class: 'btn', type: 'submit' }, 'Filter'),
          ),
        ),
        h('div', { class: 'page' }, panel('Tasks, newest first', list, pager)),
      );
      return {
        update(page) {
          const rows = page.tasks.map((t) =>
            h(
              'tr',
              { dataset: { taskId: t.taskId, state: t.state } },
              num(link(['tasks', t.taskId], `#${t.taskId}`)),
              td([h('code', {}, t.taskType), h('span', { class: 'dim' }, ` v${t.handlerVersion}`)]),
              td([statePill(t.state), t.cancelRequested && t.state === 'running' ? pill('cancel requested', 'warn') : null]),
              num(t.attemptCount),
              td(progress(t)),
              td(t.progressMessage ? h('span', { class: 'clip' }, t.progressMessage) : h('span', { class: 'dim' }, '–')),
              td(time(t.createdAt)),
              td(time(t.finishedAt)),
              td(taskActions(ctx, t)),
            ),
          );
          replace(
            list,
            table(
              [{ text: 'id', class: 'num' }, 'type', 'state', { text: 'attempts', class: 'num' }, 'progress', 'message', 'created', 'finished', ''],
              rows,
              'no task matches',
            ),
          );
          replace(
            pager,
            cursors.length
              ? h(
                  'button',
                  {
                    class: 'btn btn-sm',
                    onclick: () => {
                      before = cursors.pop();
                      ctx.refresh();
                    },
                  },
                  '← Newer',
                )
              : null,
            h('span', { class: 'dim' }, `${page.tasks.length} shown${page.scanned > page.tasks.length ? `, ${page.scanned} read` : ''}`),
            page.nextBeforeTaskId
              ? h(
                  'button',
                  {
                    class: 'btn btn-sm',
                    onclick: () => {
                      cursors.push(before);
                      before = String(page.nextBeforeTaskId);
                      ctx.refresh();
                    },
                  },
                  'Older →',
                )
              : null,
          );
        },
      };
    },
  };
}

export function taskView(id) {
  return {
    api: () => `/api/tasks/${encodeURIComponent(id)}`,
    mount(root, ctx) {
      const head = h('div', { class: 'page-head' });
      const body = h('div', { class: 'page' });
      root.append(head, body);
      return {
        update(t) {
          replace(
            head,
            h('h1', {}, link(['tasks'], 'tasks'), h('span', { class: 'dim' }, ' / '), `#${t.taskId} `, statePill(t.state)),
            taskActions(ctx, t, { resume: (r) => (location.hash = `#/tasks/${r.taskId}`), delete: () => (location.hash = '#/tasks') }),
          );
          replace(
            body,
            h(
              'div',
              { class: 'cols' },
              panel(
                'Task',
                kv([
                  ['type', [h('code', {}, t.taskType), ` handler v${t.handlerVersion}`]],
                  ['state', [statePill(t.state), t.cancelRequested ? pill('cancel requested', 'warn') : null]],
                  ['dedupe key', t.dedupeKey ? h('code', {}, t.dedupeKey) : '–'],
                  ['timeout', `${Math.round(t.timeoutMs / 1000)} s`],
                  ['created', time(t.createdAt)],
                  ['started', time(t.startedAt)],
                  ['finished', time(t.finishedAt)],
                  ['updated', time(t.updatedAt)],
                  t.resumedFromTaskId ? ['resumed from', link(['tasks', t.resumedFromTaskId], `#${t.resumedFromTaskId}`)] : null,
                ]),
              ),
              panel(
                'Attempt',
                kv([
                  ['attempts', String(t.attemptCount)],
                  ['owner', t.attemptOwner ? h('code', {}, t.attemptOwner) : '–'],
                  ['heartbeat', time(t.heartbeatAt)],
                  ['lease expires', time(t.leaseExpiresAt)],
                  ['progress', progress(t)],
                  ['message', t.progressMessage ?? '–'],
                ]),
              ),
            ),
            t.errorCode || t.errorMessage
              ? panel(
                  'Error',
                  h(
                    'div',
                    { class: 'error-box' },
                    h('code', { class: 'error-code' }, t.errorCode ?? 'error'),
                    h('pre', { class: 'error-message' }, t.errorMessage ?? ''),
                  ),
                )
              : null,
            h(
              'div',
              { class: 'cols' },
              panel('Payload', json(t.payload)),
              panel('Result', t.result === null ? h('p', { class: 'hint' }, 'no result') : json(t.result)),
            ),
          );
        },
      };
    },
  };
}
