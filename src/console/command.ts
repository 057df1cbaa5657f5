/**
 * `apsup console [--listen host:port] --families <module>`: the web console on its own store,
 * until SIGINT/SIGTERM. Reads only unless POWERCONTEXT_SERVER_RUNTIME_CONSOLE_TOKEN is set; the
 * address is --listen, else POWERCONTEXT_SERVER_RUNTIME_CONSOLE_ADDRESS (when not off), else
 * 127.0.0.1:9465. Prints the URL on standard output once it listens.
 */
import { buildRuntimeConfig } from '../config/load.ts';
import { ConfigError } from '../config/database-url.ts';
import { listenAddress } from '../config/observability-address.ts';
import { createLogger } from '../logging.ts';
import { openStore } from '../store/open.ts';
import { parseTaskConfig } from '../tasks/config.ts';
import { requireMigratedSchema } from '../cli/schema-check.ts';
import { DEFAULT_CONSOLE_ADDRESS, ConsoleServer } from './server.ts';

export interface ConsoleCommandOptions {
  listen?: string;
  familiesModule?: string;
  env?: NodeJS.ProcessEnv;
}

const listenSchema = listenAddress('127.0.0.1:9465, [::1]:9465');

export function parseListen(raw: string) {
  const parsed = listenSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`--listen ${parsed.error.issues[0]!.message.replace(' or off', '')} (got ${JSON.stringify(raw)})`);
  if (parsed.data === null) throw new ConfigError('--listen must be host:port (e.g. 127.0.0.1:9465), not off');
  return parsed.data;
}

export async function consoleCommand(options: ConsoleCommandOptions): Promise<number> {
  const { config, settings, env } = await buildRuntimeConfig({ familiesModule: options.familiesModule, env: options.env, command: 'console' });
  const address = options.listen !== undefined ? parseListen(options.listen) : (settings.CONSOLE_ADDRESS ?? DEFAULT_CONSOLE_ADDRESS);
  const taskConfig = parseTaskConfig(env, settings);
  // Reads only: never creates the database, and says what to run on an unmigrated one.
  await requireMigratedSchema(config.database, { command: 'console', allMigrations: false, drift: false });
  const logger = createLogger({ name: 'apsup-console' });
  const store = openStore(config.database);
  let server: ConsoleServer | null = null;
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    server = await ConsoleServer.start({ address, store, config, taskConfig, token: settings.CONSOLE_TOKEN, logger, env });
    console.log(`apsup console: ${server.url}/`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    return 0;
  } finally {
    clearInterval(keepAlive);
    await server?.stop();
    await store.close();
  }
}
