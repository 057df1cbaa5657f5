/**
 * The page's static files (src/console/static/, shipped with the package: no build step). Read
 * once at start-up into memory; only those names are served, so no request path reaches the
 * file system.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from 'hono';
import { SRC_DIR } from '../paths.ts';

export const STATIC_DIR = path.join(SRC_DIR, 'console', 'static');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

export class StaticFiles {
  private constructor(private readonly files: Map<string, StaticFile>) {}

  static load(dir = STATIC_DIR): StaticFiles {
    const files = new Map<string, StaticFile>();
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[path.extname(name)];
      if (!type || !/^[a-z0-9-]+\.[a-z]+$/.test(name)) continue;
      const body = fs.readFileSync(path.join(dir, name));
      files.set(name, { body, type, etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
    }
    if (!files.has('index.html')) throw new Error(`the console's page is missing (${path.join(dir, 'index.html')})`);
    return new StaticFiles(files);
  }

  names(): string[] {
    return [...this.files.keys()];
  }

  respond(c: Context, name: string): Response {
    const f = this.files.get(name);
    if (!f) return c.text('not found\n', 404);
    c.header('etag', f.etag);
    c.header('cache-control', 'no-cache');
    if (c.req.header('if-none-match') === f.etag) return c.body(null, 304);
    return c.body(new Uint8Array(f.body), 200, { 'content-type': f.type });
  }
}
