/**
 * POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS: where the observability HTTP endpoint
 * (GET /metrics, /healthz, /readyz) listens. `host:port` (IPv6 as `[::1]:9464`), default
 * 127.0.0.1:9464 (loopback only); `off` disables the endpoint. Validated with zod; errors name
 * the variable.
 */
import { z } from 'zod';
import { ConfigError } from '../config/database-url.ts';
import { ENV_PREFIX } from '../config/runtime-config.ts';

export const OBSERVABILITY_ADDRESS_VARIABLE = `${ENV_PREFIX}OBSERVABILITY_ADDRESS`;
export const DEFAULT_OBSERVABILITY_ADDRESS = '127.0.0.1:9464';

export interface ObservabilityAddress {
  host: string;
  port: number;
}

const addressSchema = z.string().trim().min(1, 'must not be empty')
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port (e.g. 127.0.0.1:9464, [::1]:9464) or off');
const portSchema = z.coerce.number().int().min(0, 'port must be 0..65535').max(65535, 'port must be 0..65535');

/** The configured address, or null when the endpoint is off. */
export function parseObservabilityAddress(env: NodeJS.ProcessEnv = process.env): ObservabilityAddress | null {
  const raw = env[OBSERVABILITY_ADDRESS_VARIABLE] ?? DEFAULT_OBSERVABILITY_ADDRESS;
  if (raw.trim().toLowerCase() === 'off') return null;
  const parsed = addressSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${OBSERVABILITY_ADDRESS_VARIABLE} ${parsed.error.issues[0]?.message ?? 'is invalid'} (got ${JSON.stringify(raw)})`);
  const i = parsed.data.lastIndexOf(':');
  const host = parsed.data.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const port = portSchema.safeParse(parsed.data.slice(i + 1));
  if (!port.success) throw new ConfigError(`${OBSERVABILITY_ADDRESS_VARIABLE} ${port.error.issues[0]?.message ?? 'has an invalid port'} (got ${JSON.stringify(raw)})`);
  return { host, port: port.data };
}
