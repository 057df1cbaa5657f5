/** Small helpers of the observability tests: an endpoint on an ephemeral loopback port, and GETs. */
import type { Runtime } from '../../src/runtime/runtime.ts';
import { ObservabilityServer } from '../../src/observability/server.ts';

export async function startEndpoint(runtime: Runtime): Promise<ObservabilityServer> {
  // No cache: tests read persisted facts right after changing them.
  return ObservabilityServer.start(runtime, { address: { host: '127.0.0.1', port: 0 }, cacheMs: 0, defaultMetrics: false });
}

export async function get(server: ObservabilityServer, path: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

export async function readyz(server: ObservabilityServer): Promise<{ status: number; doc: any }> {
  const r = await get(server, '/readyz');
  return { status: r.status, doc: JSON.parse(r.body) };
}

/** Sample lines of one metric: [labels, value]. */
export function samples(body: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of body.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const lm of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1]] = lm[2];
    out.push({ labels, value: Number(m[4]) });
  }
  return out;
}

export function value(body: string, name: string, labels: Record<string, string>): number | undefined {
  return samples(body, name).find(
    (s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length,
  )?.value;
}
