/**
 * Starting the wake-up channel for a host (`apsup run`) or publishing one message from a
 * short-lived command (`apsup trigger`, `mark-dirty`, `tasks submit`). Off unless
 * POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL is set; Redis being down never stops either.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import { NotifyChannel, notifyNamespace, type NotifyTopic } from './channel.ts';
import { parseNotifyConfig, type NotifyConfig } from './config.ts';

export interface NotifyAttachable {
  attachNotify(channel: NotifyChannel): void;
}

/** A host's channel: the runtime publishes and (background) subscribes, the task runner subscribes. */
export async function startNotify(
  config: NotifyConfig | null,
  database: DatabaseTarget,
  logger: Logger,
  attach: Array<NotifyAttachable | null>,
): Promise<NotifyChannel | null> {
  if (!config) return null;
  const channel = new NotifyChannel(config, notifyNamespace(database), logger);
  for (const a of attach) a?.attachNotify(channel);
  await channel.start();
  logger.info({ redis: config.redacted, status: channel.status().status }, 'wake-up channel started');
  return channel;
}

/** One message after a command's commit, bounded; a failure only means the poll finds the work. */
export async function publishOnce(env: NodeJS.ProcessEnv, database: DatabaseTarget, logger: Logger, topic: NotifyTopic, payload: string): Promise<void> {
  const config = parseNotifyConfig(env);
  if (!config) return;
  const channel = new NotifyChannel(config, notifyNamespace(database), logger, { subscribe: false });
  try {
    await channel.start();
    await channel.publishAndFlush(topic, payload);
  } finally {
    await channel.close();
  }
}
