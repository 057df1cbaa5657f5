/**
 * Who may read and who may act (issue 44): actions need the operator token
 * (POWERCONTEXT_SERVER_RUNTIME_CONSOLE_TOKEN) in `Authorization: Bearer <token>`, compared in
 * constant time; without a configured token every action is refused. Reads are open to loopback
 * clients that address the console by a loopback name (a DNS-rebinding page cannot), otherwise
 * they need the token too.
 */
import crypto from 'node:crypto';

export type Access = { ok: true } | { ok: false; status: 401 | 403; error: string };

export const TOKEN_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_CONSOLE_TOKEN';

/** Constant time in the length of both: the digests are compared, never the texts. */
export function tokenMatches(expected: string, given: string): boolean {
  const a = crypto.createHash('sha256').update(expected, 'utf8').digest();
  const b = crypto.createHash('sha256').update(given, 'utf8').digest();
  return crypto.timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined | null): string | undefined {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1] : undefined;
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.replace(/^::ffff:/i, '');
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** A Host header naming this machine's loopback (localhost, 127.x.y.z, [::1]), with or without a port. */
export function isLoopbackHost(host: string | undefined | null): boolean {
  if (!host) return false;
  const name = host
    .trim()
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || isLoopbackAddress(name);
}

function tokenAccess(expected: string, header: string | undefined | null): Access {
  const given = bearerToken(header);
  if (given === undefined) return { ok: false, status: 401, error: 'operator token required (Authorization: Bearer <token>)' };
  return tokenMatches(expected, given) ? { ok: true } : { ok: false, status: 403, error: 'wrong operator token' };
}

export function actionAccess(expected: string | undefined, header: string | undefined | null): Access {
  if (expected === undefined) {
    return bearerToken(header) === undefined
      ? { ok: false, status: 401, error: `operator token required; actions are disabled until ${TOKEN_VARIABLE} is set` }
      : { ok: false, status: 403, error: `actions are disabled: ${TOKEN_VARIABLE} is not set` };
  }
  return tokenAccess(expected, header);
}

export interface ReadRequest {
  remoteAddress: string | undefined;
  host: string | undefined | null;
  authorization: string | undefined | null;
}

export function readAccess(expected: string | undefined, req: ReadRequest): Access {
  if (isLoopbackAddress(req.remoteAddress) && isLoopbackHost(req.host)) return { ok: true };
  if (expected === undefined) return { ok: false, status: 403, error: `reads are served to loopback clients only while ${TOKEN_VARIABLE} is unset` };
  return tokenAccess(expected, req.authorization);
}
