/**
 * POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS: `host:port` (IPv6 as `[::1]:9464`) of the
 * observability endpoint, or `off`. Loopback by default (settings.ts).
 */
import * as z from 'zod';

export interface ObservabilityAddress {
  host: string;
  port: number;
}

/** `host:port` or `off` (null); `example` names valid values in the error message. */
export const listenAddress = (example: string) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .transform((v, ctx): ObservabilityAddress | null => {
      if (v.toLowerCase() === 'off') return null;
      const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v);
      if (!m) {
        ctx.addIssue({ code: 'custom', message: `must be host:port (e.g. ${example}) or off` });
        return z.NEVER;
      }
      const port = Number(m[2]);
      if (port > 65535) {
        ctx.addIssue({ code: 'custom', message: 'port must be 0..65535' });
        return z.NEVER;
      }
      return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
    }) as unknown as z.ZodType<ObservabilityAddress | null, string | undefined>;

export const observabilityAddress = listenAddress('127.0.0.1:9464, [::1]:9464');
