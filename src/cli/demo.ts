/**
 * `npm start`: migrates the embedded database, seeds a small workload for the reference
 * families, and runs the runtime with a small driver that keeps adding domain input and explicit
 * requests, so the log shows families being checked, scopes admitted, workers committing.
 */
import type { Runtime } from '../runtime/runtime.ts';
import { appendTopicSource } from '../families/topic-memory.ts';
import { bumpExperience } from '../families/experience.ts';
import { addProfileSignal } from '../families/profile.ts';
import type { Logger } from '../logging.ts';

/**
 * The demo's schedule keys, set explicitly: on built-in prefixes unset means off (RFC 11, README
 * configuration table). A value already in the environment wins.
 */
export const DEMO_SCHEDULE_ENV: Record<string, string> = {
  POWERCONTEXT_SERVER_RUNTIME_TOPIC_MEMORY_SCHEDULE_SECONDS: '300',
  POWERCONTEXT_SERVER_RUNTIME_EXPERIENCE_SCHEDULE_SECONDS: '900',
  POWERCONTEXT_SERVER_RUNTIME_PROFILE_SCHEDULE_ENABLED: 'true',
};

export function demoEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const [k, v] of Object.entries(DEMO_SCHEDULE_ENV)) if (out[k] === undefined || out[k]!.trim() === '') out[k] = v;
  return out;
}

export async function seedDemo(runtime: Runtime, logger: Logger): Promise<NodeJS.Timeout> {
  const store = runtime.store;
  for (let i = 1; i <= 4; i += 1) {
    for (let j = 0; j < 5; j += 1) await appendTopicSource(store, `topic-${i}`, { words: 100 + i * j });
    await bumpExperience(store, `experience-${i}`);
    await addProfileSignal(store, `user-${i}`);
  }
  runtime.notifyDirty('topic-memory');
  runtime.notifyDirty('experience');
  runtime.notifyDirty('profile');
  logger.info('demo workload seeded: 4 topic scopes x 5 sources, 4 experience scopes, 4 profile scopes');
  let n = 0;
  const timer = setInterval(() => {
    n += 1;
    const scope = `topic-${(n % 4) + 1}`;
    void (async () => {
      await appendTopicSource(store, scope, { words: 50 + n });
      await runtime.trigger('topic-memory', scope);
      if (n % 3 === 0) {
        await bumpExperience(store, `experience-${(n % 4) + 1}`);
        await runtime.trigger('experience', `experience-${(n % 4) + 1}`);
      }
      logger.info({ family: 'topic-memory', scope }, 'demo: new source appended and an explicit request accepted');
    })().catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'demo driver step failed'));
  }, 4000);
  timer.unref();
  return timer;
}
