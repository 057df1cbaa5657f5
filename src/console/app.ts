/**
 * The console's HTTP routes (Hono): the static page, the JSON API under /api/ (docs/console-api.md)
 * and the POST actions. Every answer carries the security headers (security.ts); reads go through
 * readAccess, actions through actionAccess (auth.ts); API reads answer 304 to a matching
 * If-None-Match (the page polls with ETags).
 */
import crypto from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { type Context, Hono } from 'hono';
import type { Logger } from '../logging.ts';
import { InvalidArgumentError, StoreError } from '../store/errors.ts';
import type { ConsoleActions } from './actions.ts';
import { type Access, actionAccess, readAccess } from './auth.ts';
import { NotFound, OWED_PAGE_MAX, familyDetail, scopeDetail } from './family-view.ts';
import { securityHeaders } from './security.ts';
import type { ConsoleSource } from './source.ts';
import type { StaticFiles } from './static-files.ts';
import { BadRequest, listTasks, parseTaskQuery, taskDetail } from './task-view.ts';

export interface AppOptions {
  source: ConsoleSource;
  actions: ConsoleActions;
  files: StaticFiles;
  token: string | undefined;
  logger?: Logger;
}

const refuse = (c: Context, a: Exclude<Access, { ok: true }>) => {
  if (a.status === 401) c.header('www-authenticate', 'Bearer realm="apsup console"');
  return c.json({ error: a.error }, a.status);
};

function taskId(raw: string): number {
  if (!/^\d{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < 1) throw new BadRequest('the task id must be a positive integer');
  return Number(raw);
}

/** A refusal of the database or of the input, as the CLI words it, with a status a script can act on. */
function failure(c: Context, error: unknown, logger?: Logger) {
  if (error instanceof NotFound) return c.json({ error: error.message }, 404);
  if (error instanceof BadRequest || error instanceof InvalidArgumentError) return c.json({ error: error.message }, 400);
  if (error instanceof StoreError) {
    const status = error.code === 'task_not_found' || error.code === 'intent_not_found' ? 404 : 409;
    const message = error.code === 'maintenance' ? 'refused: the deployment is in maintenance; nothing was written' : error.message;
    return c.json({ error: message, code: error.code }, status);
  }
  logger?.warn({ err: (error as Error).message }, 'console request failed');
  return c.json({ error: 'internal error' }, 500);
}

async function body(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* below */
  }
  throw new BadRequest('the body must be a JSON object');
}

export function createApp(o: AppOptions): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    for (const [k, v] of Object.entries(securityHeaders)) c.res.headers.set(k, v);
  });
  app.onError((error, c) => failure(c, error, o.logger));

  // Reads: the token is needed off loopback (auth.ts).
  app.use('/api/*', async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      const a = readAccess(o.token, { remoteAddress: getConnInfo(c).remote.address, host: c.req.header('host'), authorization: c.req.header('authorization') });
      if (!a.ok) return refuse(c, a);
    } else if (c.req.method === 'POST') {
      const a = actionAccess(o.token, c.req.header('authorization'));
      if (!a.ok) return refuse(c, a);
    } else return c.json({ error: 'method not allowed' }, 405);
    await next();
  });

  const read = (c: Context, value: object) => {
    const text = JSON.stringify(value);
    // The database clock alone does not make an answer new: a poll of unchanged facts gets 304.
    const { dbNow: _clock, ...facts } = value as Record<string, unknown>;
    const etag = `W/"${crypto.createHash('sha256').update(JSON.stringify(facts)).digest('base64url').slice(0, 27)}"`;
    c.header('etag', etag);
    c.header('cache-control', 'no-cache');
    if (c.req.header('if-none-match') === etag) return c.body(null, 304);
    return c.body(text, 200, { 'content-type': 'application/json; charset=utf-8' });
  };

  app.get('/api/overview', async (c) => read(c, await o.source.overview()));
  app.get('/api/families', async (c) => read(c, { families: (await o.source.overview()).families }));
  app.get('/api/leases', async (c) => {
    const report = await o.source.status();
    return read(c, { dbNow: report.dbNow, mode: report.mode, supervisors: report.supervisors, termHistory: o.source.terms.list() });
  });
  app.get('/api/families/:family', async (c) => {
    const after = Number(c.req.query('after') ?? 0);
    const dirtyAfter = Number(c.req.query('dirtyAfter') ?? 0);
    const limit = Number(c.req.query('limit') ?? 100);
    for (const [name, v] of [
      ['after', after],
      ['dirtyAfter', dirtyAfter],
    ] as const)
      if (!Number.isSafeInteger(v) || v < 0) throw new BadRequest(`${name} must be a non-negative integer (a pending sequence)`);
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > OWED_PAGE_MAX) throw new BadRequest(`limit must be an integer in 1..${OWED_PAGE_MAX}`);
    return read(c, await familyDetail(o.source, c.req.param('family'), { after, dirtyAfter, limit }));
  });
  app.get('/api/families/:family/scopes/:scope', async (c) => read(c, await scopeDetail(o.source, c.req.param('family'), c.req.param('scope'))));
  app.get('/api/tasks', async (c) => read(c, await listTasks(o.source, parseTaskQuery(c.req.query()))));
  app.get('/api/tasks/:id', async (c) => {
    const task = await taskDetail(o.source, taskId(c.req.param('id')));
    if (!task) throw new NotFound(`task ${c.req.param('id')} does not exist`);
    return read(c, task);
  });

  // Actions (POST only, the token required: auth.ts).
  const logged = (what: string, fields: Record<string, unknown>) => o.logger?.info(fields, `console action: ${what}`);
  app.post('/api/families/:family/scopes/:scope/trigger', async (c) => {
    logged('trigger', { family: c.req.param('family') });
    return c.json(await o.actions.intent('trigger', c.req.param('family'), c.req.param('scope')));
  });
  app.post('/api/families/:family/scopes/:scope/mark-dirty', async (c) => {
    logged('mark-dirty', { family: c.req.param('family') });
    return c.json(await o.actions.intent('mark-dirty', c.req.param('family'), c.req.param('scope')));
  });
  for (const action of ['cancel', 'resume', 'delete'] as const) {
    app.post(`/api/tasks/:id/${action}`, async (c) => {
      const id = taskId(c.req.param('id'));
      logged(action, {});
      return c.json(await o.actions[action](id));
    });
  }
  app.post('/api/maintenance', async (c) => {
    const { on } = await body(c);
    if (typeof on !== 'boolean') throw new BadRequest('the body must be {"on": true|false}');
    logged('maintenance', { on });
    return c.json(await o.actions.maintenance(on));
  });
  app.post('/api/tasks/capacity', async (c) => {
    const { capacity } = await body(c);
    if (typeof capacity !== 'number') throw new BadRequest('the body must be {"capacity": 1..10000}');
    logged('capacity', { capacity });
    return c.json(await o.actions.capacity(capacity));
  });
  app.all('/api/*', (c) => c.json({ error: 'no such API route' }, 404));

  // The page: static files only (no data in them; the API carries it).
  app.get('/', (c) => o.files.respond(c, 'index.html'));
  app.get('/static/:name', (c) => o.files.respond(c, c.req.param('name')));
  app.all('*', (c) => c.text('not found\n', 404));
  return app;
}
