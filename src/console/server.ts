/**
 * The console's HTTP server: the Hono app on node:http, bound to one address (loopback by
 * default), with the source and actions it serves. `apsup console` starts one on its own store;
 * `apsup run` mounts one on the runtime's store with the live view (run.ts).
 */
import { boundAddress, urlOf } from '../observability/bound-address.ts';
import type http from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { ObservabilityAddress } from '../config/observability-address.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Logger } from '../logging.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { Store } from '../store/types.ts';
import type { TaskConfig } from '../tasks/config.ts';
import { ConsoleActions } from './actions.ts';
import { createApp } from './app.ts';
import { isLoopbackAddress } from './auth.ts';
import { LiveRuntime } from './live.ts';
import { ConsoleSource } from './source.ts';
import { StaticFiles } from './static-files.ts';

export const DEFAULT_CONSOLE_ADDRESS: ObservabilityAddress = { host: '127.0.0.1', port: 9465 };

export interface ConsoleOptions {
  address: ObservabilityAddress;
  store: Store;
  config: RuntimeConfig;
  taskConfig: TaskConfig;
  token: string | undefined;
  /** The host's runtime (apsup run): live view, and its trigger wakes the local leader. */
  runtime?: Runtime | null;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

export class ConsoleServer {
  private closed: Promise<void> | null = null;

  private constructor(
    private readonly server: http.Server,
    readonly source: ConsoleSource,
  ) {}

  static async start(o: ConsoleOptions): Promise<ConsoleServer> {
    const source = new ConsoleSource({ store: o.store, config: o.config, live: o.runtime ? new LiveRuntime(o.runtime) : null });
    const actions = new ConsoleActions({ source, taskConfig: o.taskConfig, runtime: o.runtime ?? null, env: o.env });
    const app = createApp({ source, actions, files: StaticFiles.load(), token: o.token, logger: o.logger });
    const server = createAdaptorServer({ fetch: app.fetch }) as http.Server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(o.address.port, o.address.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      source.close();
      throw error;
    }
    const s = new ConsoleServer(server, source);
    if (o.token === undefined && !isLoopbackAddress(s.address.host))
      o.logger?.warn({ address: s.address }, 'web console on a non-loopback address without an operator token: other machines get 403 for every read');
    o.logger?.info(
      { address: s.address, actions: o.token !== undefined, loopback: isLoopbackAddress(s.address.host) },
      o.token === undefined ? 'web console listening (read-only: no operator token set)' : 'web console listening',
    );
    return s;
  }

  get address(): ObservabilityAddress {
    return boundAddress(this.server);
  }

  get url(): string {
    return urlOf(this.address);
  }

  stop(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      this.source.close();
      this.server.close(() => resolve());
      this.server.closeAllConnections?.();
    });
    return this.closed;
  }
}
