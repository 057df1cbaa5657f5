/**
 * The configuration of a command that runs against the families module: every setting read once
 * (settings.ts), the families loaded and resolved (runtime-config.ts). `--role` and `--families`
 * override their variables.
 */
import { REFERENCE_FAMILIES_MODULE, loadFamilies } from '../registry/load.ts';
import { ConfigError } from './database-url.ts';
import { ROLE_VARIABLE, parseRuntimeConfig, type RuntimeConfig } from './runtime-config.ts';
import { readSettings, type Settings } from './settings.ts';

export interface ConfigOptions {
  familiesModule?: string;
  role?: string;
  env?: NodeJS.ProcessEnv;
  /** `apsup start`: the demo, the only run of the reference families. */
  demo?: boolean;
  /** The command, for messages (run, status, trigger, ...). */
  command?: string;
}

export async function buildRuntimeConfig(
  options: ConfigOptions,
): Promise<{ config: RuntimeConfig; module: string; settings: Settings; env: NodeJS.ProcessEnv }> {
  const env = { ...(options.env ?? process.env) };
  if (options.role !== undefined) {
    if (!['all', 'api', 'background'].includes(options.role))
      throw new ConfigError(`--role must be all, api or background, got ${JSON.stringify(options.role)}`);
    env[ROLE_VARIABLE] = options.role;
  }
  const settings = readSettings(env);
  const modulePath = options.demo ? REFERENCE_FAMILIES_MODULE : (options.familiesModule ?? settings.FAMILIES_MODULE);
  // RFC 8: the api role runs no processor, so it needs none of their files.
  const requireProcessors = settings.ARTIFACT_PROCESSING_ROLE !== 'api';
  const { module, registrations } = await loadFamilies(modulePath, { allowReference: options.demo, command: options.command ?? 'run', requireProcessors });
  return { config: parseRuntimeConfig(env, registrations, settings), module, settings, env };
}
