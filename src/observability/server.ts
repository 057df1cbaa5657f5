/**
 * The observability HTTP endpoint (node:http): GET /metrics (Prometheus text format), GET
 * /healthz (liveness: the process answers), GET /readyz (the readiness document as JSON; 503
 * while unavailable). Bound to POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS (default
 * 127.0.0.1:9464, loopback only; port 0 picks a free port, reported by `address`).
 */
import { boundAddress, urlOf } from './bound-address.ts';
import http from 'node:http';
import type { Logger } from '../logging.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { ObservabilityAddress } from './config.ts';
import { PersistedFacts, type FactOptions } from './facts.ts';
import { createRuntimeMetrics, type RuntimeMetrics } from './metrics.ts';
import { buildReadiness } from './readiness.ts';
import { registerTaskMetrics } from './task-metrics.ts';
import type { TaskRunner } from '../tasks/task-runner.ts';

export interface ObservabilityOptions extends FactOptions {
  address: ObservabilityAddress;
  logger?: Logger;
  /**
   * Include prom-client's default process and Node.js metrics (default true; their event-loop
   * delay monitor samples every 100 ms in native code and holds the process open for nothing).
   */
  defaultMetrics?: boolean;
  /** The durable task runner embedded in this host (apsup run): its metrics and reconciler health. */
  taskRunner?: TaskRunner | null;
}

export class ObservabilityServer {
  private readonly server: http.Server;
  private readonly metrics: RuntimeMetrics;
  private readonly taskMetrics: { close(): void };
  readonly facts: PersistedFacts;
  private closed: Promise<void> | null = null;

  private constructor(
    readonly runtime: Runtime,
    private readonly options: ObservabilityOptions,
  ) {
    this.facts = new PersistedFacts(runtime, options);
    this.metrics = createRuntimeMetrics(runtime, this.facts, { defaultMetrics: options.defaultMetrics ?? true });
    this.taskMetrics = registerTaskMetrics(this.metrics.registry, this.facts, options.taskRunner ?? null);
    this.server = http.createServer((req, res) => {
      void this.handle(req, res);
    });
  }

  static async start(runtime: Runtime, options: ObservabilityOptions): Promise<ObservabilityServer> {
    const s = new ObservabilityServer(runtime, options);
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.server.listen(options.address.port, options.address.host, () => {
        s.server.off('error', reject);
        resolve();
      });
    });
    s.server.unref();
    options.logger?.info({ address: s.address }, 'observability endpoint listening (/metrics, /healthz, /readyz)');
    return s;
  }

  /** The bound address (the real port when 0 was asked for). */
  get address(): ObservabilityAddress {
    return boundAddress(this.server);
  }

  get url(): string {
    return urlOf(this.address);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      if (path === '/metrics') {
        const body = await this.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(body);
      } else if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      } else if (path === '/readyz') {
        const doc = await buildReadiness(this.runtime, this.facts, this.options.taskRunner ?? null);
        res.writeHead(doc.ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      }
    } catch (error) {
      this.options.logger?.warn({ path, err: (error as Error).message }, 'observability request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    }
  }

  async stop(): Promise<void> {
    this.closed ??= (async () => {
      this.metrics.close();
      this.taskMetrics.close();
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections?.();
      });
    })();
    return this.closed;
  }
}
