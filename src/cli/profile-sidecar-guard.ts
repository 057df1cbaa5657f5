/**
 * After a Profile adoption (`apsup migrate adopt profile-apscheduler`), the APScheduler sidecar
 * must not run the Profile job again next to the supervisor (RFC 11: never an APScheduler job and
 * a supervisor worker on the same domain progress). A start that finds the adopted job back in
 * the job store is refused (roles all/background) or, for the api role that runs no Profile
 * work, reported at error level. Plain bounded reads: the adoption ledger, then the job row.
 */
import { ConfigError } from '../config/database-url.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Logger } from '../logging.ts';
import type { Store } from '../store/types.ts';

/** pc_aps_adopt_profile_apscheduler writes 'binding <binding>: job <id> <state> ...'. */
const SUMMARY = /^binding (\S+): job (\S+) /;

export async function checkProfileSidecar(store: Store, config: RuntimeConfig, logger: Logger): Promise<void> {
  const [adoption] = await store.domainQuery("SELECT summary FROM pc_aps_adoptions WHERE adoption = 'profile_apscheduler'");
  const m = adoption ? SUMMARY.exec(String(adoption.summary)) : null;
  if (!m) return;
  const [, binding, jobId] = m as unknown as [string, string, string];
  if (!config.families.some((f) => f.registration.bindingName === binding)) return;
  const table =
    store.backend === 'sqlite'
      ? await store.domainQuery("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'apscheduler_jobs'")
      : await store.domainQuery("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'apscheduler_jobs'");
  if (table.length === 0) return;
  const jobs = await store.domainQuery('SELECT id FROM apscheduler_jobs WHERE id = ?', [jobId]);
  if (jobs.length === 0) return;
  const message = `the APScheduler job store holds the Profile job ${jobId} again, although binding ${binding} was adopted by the supervisor (apsup migrate adopt profile-apscheduler): the sidecar and the supervisor would both run it; remove the job from the sidecar's job store (or stop the sidecar) first`;
  if (config.role === 'api') {
    logger.error({ binding, jobId }, message);
    return;
  }
  throw new ConfigError(`refusing to start: ${message}`);
}
