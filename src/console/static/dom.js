// DOM helpers. Every value reaches the page as a text node or an attribute set through the DOM
// API: data is never parsed as HTML (no innerHTML anywhere in the console).

/** h('td', { class: 'num' }, 'text', child): an element; strings and numbers become text nodes. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** An in-page link: the route's parts are URI-encoded, so a scope id cannot leave the hash. */
export function link(parts, text, attrs = {}) {
  return h('a', { href: `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}`, ...attrs }, text);
}

export function pill(text, kind) {
  return h('span', { class: `pill pill-${kind ?? 'muted'}` }, text);
}

const STATE_KIND = { pending: 'info', running: 'accent', succeeded: 'ok', failed: 'bad', cancelled: 'muted' };
export const statePill = (state) => pill(state, STATE_KIND[state] ?? 'muted');

/** "12:03:04" today, else "2026-12-07 12:03"; the full ISO time in the title. */
export function time(iso) {
  if (!iso) return h('span', { class: 'dim' }, '–');
  const d = new Date(iso);
  const today = new Date().toDateString() === d.toDateString();
  const text = today ? d.toLocaleTimeString([], { hour12: false }) : `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)}`;
  return h('time', { datetime: iso, title: iso }, text);
}

/** "in 4m 10s" / "3m 2s ago" relative to the database clock. */
export function relative(iso, dbNow) {
  if (!iso) return '–';
  const ms = new Date(iso).getTime() - new Date(dbNow).getTime();
  const s = Math.round(Math.abs(ms) / 1000);
  const text =
    s < 60
      ? `${s}s`
      : s < 3600
        ? `${Math.floor(s / 60)}m ${s % 60}s`
        : s < 86400
          ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
          : `${Math.floor(s / 86400)}d`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

export function json(value) {
  return h('pre', { class: 'json' }, value === undefined ? '' : JSON.stringify(value, null, 2));
}

export function table(headers, rows, empty = 'nothing to show') {
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      headers.map((x) => (typeof x === 'string' ? h('th', {}, x) : h('th', { class: x.class }, x.text))),
    ),
  );
  const body = h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { class: 'empty', colspan: headers.length }, empty)));
  return h('table', { class: 'grid' }, head, body);
}

export const td = (content, cls) => h('td', cls ? { class: cls } : {}, content);
export const num = (n) => h('td', { class: 'num' }, n === null || n === undefined ? '–' : n instanceof Node ? n : String(n));

export function panel(title, ...children) {
  return h('section', { class: 'panel' }, h('h2', {}, title), ...children);
}

export function kv(pairs) {
  return h(
    'dl',
    { class: 'kv' },
    pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}
