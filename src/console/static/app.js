// The console's shell: header (deployment, database time, operator token), navigation, the
// routed view, toasts and confirmation. Routes are hash routes (#/, #/families/<f>,
// #/families/<f>/scopes/<s>, #/tasks?..., #/tasks/<id>); each view polls its API with ETags.
import { ApiError, get, post, token } from './api.js';
import { h, link, pill, replace, time } from './dom.js';
import { familyView, scopeView } from './view-family.js';
import { overviewView } from './view-overview.js';
import { taskView, tasksView } from './view-tasks.js';
import './widgets.js';

const POLL_MS = 3000;

function route() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query);
  if (parts[0] === 'families' && parts.length === 2) return { nav: `family:${parts[1]}`, view: familyView(parts[1]) };
  if (parts[0] === 'families' && parts[2] === 'scopes' && parts.length === 4) return { nav: `family:${parts[1]}`, view: scopeView(parts[1], parts[3]) };
  if (parts[0] === 'tasks' && parts.length === 2) return { nav: 'tasks', view: taskView(parts[1]) };
  if (parts[0] === 'tasks') return { nav: 'tasks', view: tasksView(params) };
  return { nav: 'overview', view: overviewView() };
}

class ConsoleApp extends HTMLElement {
  connectedCallback() {
    this.status = h('div', { class: 'env' });
    this.clock = h('span', { class: 'clock', title: 'database time' });
    this.tokenInput = h('input', { type: 'password', placeholder: 'operator token', autocomplete: 'off', 'aria-label': 'operator token', id: 'token' });
    this.lock = h('span', { class: 'lock' });
    const tokenForm = h(
      'form',
      {
        class: 'token',
        onsubmit: (e) => {
          e.preventDefault();
          this.saveToken();
        },
      },
      this.lock,
      this.tokenInput,
      h('button', { class: 'btn', type: 'submit' }, 'Use'),
      h(
        'button',
        {
          class: 'btn btn-ghost',
          type: 'button',
          onclick: () => {
            this.tokenInput.value = '';
            this.saveToken();
          },
        },
        'Forget',
      ),
    );
    this.navFamilies = h('div', { class: 'nav-group' });
    this.nav = h('nav', { class: 'side' });
    this.main = h('main', { class: 'main', id: 'main' });
    this.toasts = h('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' });
    this.confirm = document.createElement('aps-confirm');
    replace(
      this,
      h(
        'header',
        { class: 'top' },
        h('div', { class: 'brand' }, h('span', { class: 'logo' }, 'aps'), h('span', {}, 'Artifact Processing Supervisor')),
        this.status,
        this.clock,
        tokenForm,
      ),
      h('div', { class: 'body' }, this.nav, this.main),
      this.toasts,
      this.confirm,
    );
    this.tokenInput.value = token.get();
    this.showLock();
    window.addEventListener('hashchange', () => this.open());
    document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && this.poll());
    this.open();
  }

  saveToken() {
    token.set(this.tokenInput.value.trim());
    this.showLock();
    this.toast(token.get() ? 'operator token set for this tab' : 'operator token forgotten', 'info');
  }

  showLock() {
    replace(this.lock, token.get() ? pill('actions enabled', 'ok') : pill('read-only', 'muted'));
  }

  toast(message, kind = 'info') {
    const t = h('div', { class: `toast toast-${kind}` }, message);
    this.toasts.append(t);
    setTimeout(() => t.remove(), kind === 'bad' ? 9000 : 4000);
  }

  /** The context views act through: confirmed, token-carrying POSTs with the outcome as a toast. */
  get ctx() {
    return {
      act: async ({ title, message, verb, path, body, danger, done }) => {
        if (!(await this.confirm.ask(title, message, verb, danger))) return;
        try {
          const result = await post(path, body);
          this.toast(`${verb}: done`, 'ok');
          done?.(result);
        } catch (error) {
          this.toast(`${verb} refused: ${error instanceof ApiError ? `${error.status} ${error.message}` : error.message}`, 'bad');
        }
        this.poll();
      },
      toast: (m, k) => this.toast(m, k),
      refresh: () => this.poll(),
    };
  }

  open() {
    const { nav, view } = route();
    this.current = view;
    this.navKey = nav;
    replace(this.main);
    this.mounted = view.mount(this.main, this.ctx);
    this.fresh = true;
    this.renderNav();
    this.poll();
  }

  renderNav() {
    const item = (key, parts, text, extra) => link(parts, [text, extra], { class: this.navKey === key ? 'nav-item active' : 'nav-item' });
    replace(
      this.nav,
      h('div', { class: 'nav-title' }, 'Runtime'),
      item('overview', [], 'Overview'),
      item('tasks', ['tasks'], 'Durable tasks'),
      h('div', { class: 'nav-title' }, 'Families'),
      (this.families ?? []).map((f) =>
        item(`family:${f.family}`, ['families', f.family], f.family, f.owedInvocations > 0 ? h('span', { class: 'badge' }, String(f.owedInvocations)) : null),
      ),
    );
  }

  async poll() {
    clearTimeout(this.timer);
    const view = this.current;
    try {
      const [{ data: overview, changed: headerChanged }, { data, changed }] = await Promise.all([
        get('/api/overview'),
        view.api ? get(view.api()) : Promise.resolve({}),
      ]);
      if (view !== this.current) return;
      // A freshly mounted view renders its first answer even when the cache says it is unchanged.
      const fresh = this.fresh;
      this.fresh = false;
      if (headerChanged || fresh) this.renderHeader(overview);
      if (fresh || (view.api ? changed : headerChanged)) this.mounted.update(view.api ? data : overview, overview);
      this.main.removeAttribute('data-error');
    } catch (error) {
      // One toast per new problem, not one per poll.
      if (this.main.dataset.error !== error.message) {
        const denied = error instanceof ApiError && (error.status === 401 || error.status === 403);
        this.toast(denied ? `${error.message} — enter the operator token (top right)` : error.message, 'bad');
      }
      this.main.dataset.error = error.message;
    }
    if (document.visibilityState === 'visible') this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  renderHeader(o) {
    this.families = o.families;
    this.renderNav();
    const active = o.supervisors.filter((s) => s.active && (o.mode !== null || s.mode === 'global'));
    const live = active.filter((s) => s.live);
    const leader = active.length === 1 ? live[0] : null;
    replace(
      this.status,
      pill(o.backend, 'muted'),
      h('span', { class: 'db', title: 'database (password never shown)' }, o.database),
      pill(`mode ${o.mode ?? 'unrecorded'}`, 'info'),
      o.maintenance ? pill('MAINTENANCE', 'warn') : null,
      o.schema.drift ? pill('schema drift', 'bad') : o.schema.pending > 0 ? pill(`${o.schema.pending} pending migration(s)`, 'warn') : null,
      leader
        ? pill(`leader ${leader.holderId} · gen ${leader.supervisorGeneration}`, 'ok')
        : active.length > 1
          ? pill(`${live.length}/${active.length} terms live`, live.length === active.length ? 'ok' : 'warn')
          : pill('no live leader', 'bad'),
    );
    replace(this.clock, 'db ', time(o.dbNow));
  }
}

customElements.define('aps-console', ConsoleApp);
