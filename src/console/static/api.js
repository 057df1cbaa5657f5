// The JSON API client: reads poll with ETags (a 304 keeps the last answer), actions carry the
// operator token from this tab's session storage as `Authorization: Bearer`.
const cache = new Map();
const TOKEN_KEY = 'apsup-console-token';

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (value) => (value ? sessionStorage.setItem(TOKEN_KEY, value) : sessionStorage.removeItem(TOKEN_KEY)),
};

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function headers(extra = {}) {
  const t = token.get();
  return t ? { ...extra, authorization: `Bearer ${t}` } : extra;
}

async function failure(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    message = (await res.json()).error ?? message;
  } catch {}
  return new ApiError(res.status, message);
}

/** GET with If-None-Match; resolves to { data, changed }. */
export async function get(path) {
  const cached = cache.get(path);
  const res = await fetch(path, { headers: headers(cached ? { 'if-none-match': cached.etag } : {}), cache: 'no-store' });
  if (res.status === 304 && cached) return { data: cached.data, changed: false };
  if (!res.ok) throw await failure(res);
  const data = await res.json();
  const etag = res.headers.get('etag');
  if (etag) cache.set(path, { etag, data });
  return { data, changed: true };
}

export async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json' }),
    body: JSON.stringify(body ?? {}),
  });
  if (!res.ok) throw await failure(res);
  cache.clear();
  return res.json();
}
