/**
 * `apsup migrate adopt <source>`: converts the state of a scheduler this runtime replaces, in a
 * maintenance window (RFC 11; A12, A13). Every step is SQL a DBA can read before it runs
 * (`--dry-run` and `apsup migrate sql` print the plan):
 *
 * topic-memory-pr1490 (migrations/<backend>/adopt/topic_memory_pr1490.*):
 *   0. preflight (read-only): baseline shape, no live PR #1490 lease, data consistency. Any
 *      problem stops here with a report; the database is left exactly as it was.
 *   1. set aside the PR #1490 binding states and lease (renamed, nothing dropped);
 *   2. the current migrations up to the adoption ledger;
 *   3. the conversion pc_aps_adopt_topic_memory_pr1490 (one transaction, consistency-checked
 *      against the legacy rows, rolled back on any failure);
 *   4. the remaining migrations;
 *   5. retire: drop the auto-wave target table and the set-aside tables (skipped with
 *      --keep-legacy; a later run retires).
 *   Interrupted runs resume from the phase the database shows (adoption-detect.ts).
 * profile-apscheduler (migrations/<backend>/adopt/profile_apscheduler.*):
 *   preflight (job store shape, not adopted yet, binding not yet checked by the supervisor), then
 *   the Profile job's next_run_time is judged against the configured cron, and
 *   pc_aps_adopt_profile_apscheduler records the checkpoint and removes the job in one transaction.
 * After a conversion the family's pending-work provider, if it has one, re-marks dirty every scope
 * whose domain facts show work (sources that arrived before the switch are never skipped).
 */
export {
  ADOPTION_SOURCES,
  PROFILE_APSCHEDULER,
  adoptionFile,
  formatAdoption,
  runPreflight,
  type AdoptionContext,
  type AdoptionProblem,
  type AdoptionResult,
  type AdoptionSource,
} from './adoption-common.ts';
export { adoptTopicMemoryPr1490, topicMemoryPr1490Plan } from './adopt-topic-memory.ts';
export {
  DEFAULT_PROFILE_JOB_ID,
  adoptProfileApscheduler,
  decideProfileCheckpoint,
  type ProfileDecision,
  type ProfileJobState,
} from './adopt-profile.ts';
