/**
 * POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS: where the observability HTTP endpoint
 * (GET /metrics, /healthz, /readyz) listens; default 127.0.0.1:9464 (loopback only), `off`
 * disables it. Parsed with every other setting by src/config/settings.ts.
 */
import { readSettings, variableOf, type Settings } from '../config/settings.ts';
import type { ObservabilityAddress } from '../config/observability-address.ts';

export type { ObservabilityAddress };
export const OBSERVABILITY_ADDRESS_VARIABLE = variableOf('OBSERVABILITY_ADDRESS');
export const DEFAULT_OBSERVABILITY_ADDRESS = '127.0.0.1:9464';

/** The configured address, or null when the endpoint is off. */
export function parseObservabilityAddress(env: NodeJS.ProcessEnv = process.env, settings: Settings = readSettings(env)): ObservabilityAddress | null {
  return settings.OBSERVABILITY_ADDRESS;
}
