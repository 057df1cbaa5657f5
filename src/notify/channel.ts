/**
 * The optional cross-process wake-up channel (issue 12 item 6; the decision record's publication
 * path): after a commit, the process that accepted a request, marked a key dirty or submitted a
 * task publishes its id on Redis pub/sub; the background leader and the task runners subscribe
 * and wake their discovery or probe at once. The database stays the truth: a message is only a
 * hint, a lost or failed one only delays until the poll (which keeps running), and a Redis
 * outage degrades latency, never correctness. Publishing never throws and never waits for
 * Redis (no offline queue: a message during an outage is dropped and counted). After the
 * subscriber reconnects, every handler is called once without an id (messages may have been
 * lost meanwhile: look everything up once).
 */
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import { requirePackage } from '../paths.ts';
import type { NotifyConfig } from './config.ts';

export type NotifyTopic = 'request' | 'dirty' | 'task';
/** A message's payload (an id), or null after a reconnect (look up everything once). */
export type NotifyHandler = (payload: string | null) => void;

export interface NotifyStatus {
  status: 'up' | 'down';
  redis: string;
  published: number;
  publishFailures: number;
  received: number;
  reconnects: number;
  lastError: string | null;
}

const TOPICS: NotifyTopic[] = ['request', 'dirty', 'task'];

/** Channels are per database (two deployments on one Redis never wake each other), named without credentials. */
export function notifyNamespace(target: DatabaseTarget): string {
  const identity = target.backend === 'sqlite' ? `sqlite:${target.file}` : `mysql:${target.host}:${target.port}/${target.database}`;
  return `apsup:${crypto.createHash('sha256').update(identity).digest('hex').slice(0, 16)}`;
}

function backoff(times: number): number {
  return Math.min(100 * 2 ** Math.min(times, 5), 2000);
}

export class NotifyChannel {
  private readonly pub: Redis;
  private readonly sub: Redis | null;
  private readonly handlers = new Map<NotifyTopic, Set<NotifyHandler>>();
  private readonly stats = { published: 0, publishFailures: 0, received: 0, reconnects: 0 };
  private lastError: string | null = null;
  private subReadyOnce = false;
  private warned = false;
  private closed = false;

  /** @param options.subscribe false: a publisher only (a CLI command that accepts one intent) */
  constructor(
    private readonly config: NotifyConfig,
    private readonly namespace: string,
    private readonly logger: Logger,
    options: { subscribe?: boolean } = {},
  ) {
    // Loaded only when a notification URL is set (off by default).
    const { Redis } = requirePackage('ioredis') as typeof import('ioredis');
    const common = { lazyConnect: true, connectTimeout: 2000, retryStrategy: backoff, maxRetriesPerRequest: 1 } as const;
    this.pub = new Redis(config.url, { ...common, enableOfflineQueue: false });
    this.sub =
      options.subscribe === false ? null : new Redis(config.url, { ...common, enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true });
    for (const client of this.clients()) {
      client.on('error', (error: Error) => this.failed(error));
      client.on('ready', () => this.recovered());
    }
    if (!this.sub) return;
    this.sub.on('ready', () => {
      // A reconnect after an outage: messages published meanwhile are lost, so every handler looks once.
      if (this.subReadyOnce) {
        this.stats.reconnects += 1;
        for (const topic of TOPICS) this.dispatch(topic, null);
      }
      this.subReadyOnce = true;
    });
    this.sub.on('message', (channel: string, message: string) => {
      const topic = channel.slice(this.namespace.length + 1) as NotifyTopic;
      if (!TOPICS.includes(topic)) return;
      this.stats.received += 1;
      this.dispatch(topic, message);
    });
  }

  /** Connects and subscribes; never fails the start: with Redis down the clients keep reconnecting in the background. */
  async start(): Promise<void> {
    const channels = TOPICS.map((t) => this.channel(t));
    const sub = this.sub;
    await Promise.all([
      this.pub.connect().catch((error: Error) => this.failed(error)),
      sub
        ?.connect()
        .then(() => sub.subscribe(...channels))
        .catch((error: Error) => {
          this.failed(error);
          // Subscribed once the connection is back (the offline queue keeps this command).
          void sub.subscribe(...channels).catch(() => undefined);
        }),
    ]);
  }

  /** Publishes and waits (bounded) until Redis took it: for a short-lived publisher about to exit. */
  async publishAndFlush(topic: NotifyTopic, payload: string, boundMs = 1000): Promise<boolean> {
    if (this.closed || this.pub.status !== 'ready') return false;
    this.stats.published += 1;
    const sent = this.pub.publish(this.channel(topic), payload).then(
      () => true,
      (error: Error) => {
        this.stats.publishFailures += 1;
        this.failed(error);
        return false;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), boundMs);
    });
    try {
      return await Promise.race([sent, bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  on(topic: NotifyTopic, handler: NotifyHandler): () => void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(handler);
    return () => set!.delete(handler);
  }

  /** After the commit: a hint for the other processes. Never throws, never waits for Redis. */
  publish(topic: NotifyTopic, payload: string): void {
    if (this.closed) return;
    this.stats.published += 1;
    try {
      void this.pub.publish(this.channel(topic), payload).catch((error: Error) => {
        this.stats.publishFailures += 1;
        this.failed(error);
      });
    } catch (error) {
      this.stats.publishFailures += 1;
      this.failed(error as Error);
    }
  }

  status(): NotifyStatus {
    const up = this.clients().every((c) => c.status === 'ready');
    return { status: up ? 'up' : 'down', redis: this.config.redacted, ...this.stats, lastError: up ? null : this.lastError };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    for (const client of this.clients()) {
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    }
  }

  private clients(): Redis[] {
    return this.sub ? [this.pub, this.sub] : [this.pub];
  }

  private channel(topic: NotifyTopic): string {
    return `${this.namespace}:${topic}`;
  }

  private dispatch(topic: NotifyTopic, payload: string | null): void {
    for (const handler of this.handlers.get(topic) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.logger.warn({ topic, err: (error as Error).message }, 'wake-up notification handler failed; polling continues');
      }
    }
  }

  private failed(error: Error): void {
    // ioredis messages name host:port at most; the URL (and its credentials) is never logged.
    this.lastError = String(error?.message ?? error)
      .replace(/redis(s)?:\/\/\S+/g, this.config.redacted)
      .slice(0, 200);
    if (this.warned || this.closed) return;
    this.warned = true;
    this.logger.warn({ redis: this.config.redacted, err: this.lastError }, 'wake-up channel unavailable; falling back to polling until Redis is back');
  }

  private recovered(): void {
    if (!this.warned || !this.clients().every((c) => c.status === 'ready')) return;
    this.warned = false;
    this.logger.info({ redis: this.config.redacted }, 'wake-up channel available again');
  }
}
