/**
 * The effective schedule of one family (RFC 10, 11). Built-in prefixes keep the legacy meaning
 * of their existing keys (RFC 11 "已有周期 Key 保持名称与关闭语义"): an automatic schedule runs only
 * when configured. MEMORY, TOPIC_MEMORY, EXPERIENCE, SKILL, HANDOFF: a positive
 * `<PREFIX>_SCHEDULE_SECONDS` (or a `_CRON`) turns it on; unset, blank or `0` is off.
 * PROFILE: on only with `PROFILE_SCHEDULE_ENABLED=true` (its cron and time zone then default to
 * the registration). `_SCHEDULE_ENABLED=true` alone enables the registered schedule; `false`
 * turns any schedule off. A prefix of its own keeps the registered schedule when unset.
 */
import { ConfigError } from './database-url.ts';
import { cronProblem, isValidTimezone } from '../schedule/cron.ts';
import type { FamilyRegistration, SchedulePolicyDecl } from '../registry/registration.ts';

import { ENV_PREFIX } from './settings.ts';

export { ENV_PREFIX };

/** Built-in family prefixes of the RFC (section 10); settings for them need a registered processor. */
export const BUILTIN_PREFIXES = ['MEMORY', 'TOPIC_MEMORY', 'EXPERIENCE', 'PROFILE', 'SKILL', 'HANDOFF'];
/** Built-in prefixes whose schedule is switched on by the enable flag alone (legacy Profile). */
const ENABLE_FLAG_ONLY = new Set(['PROFILE']);

export interface Setting {
  value: string;
  source: string;
}
export type Parse<T> = (value: string, variable: string) => T;

export interface ScheduleInputs {
  seconds?: Setting;
  cron?: Setting;
  tz?: Setting;
  enabled?: Setting;
}

export function resolveSchedule(
  registration: FamilyRegistration,
  s: ScheduleInputs,
  parse: { seconds: Parse<number>; bool: Parse<boolean> },
): SchedulePolicyDecl {
  const p = registration.configPrefix;
  const { seconds, cron, tz, enabled } = s;
  const builtin = BUILTIN_PREFIXES.includes(p);
  if (seconds && cron) throw new ConfigError(`${seconds.source} and ${cron.source} are both set: a family has either an interval or a cron schedule, not both`);
  if (seconds && tz)
    throw new ConfigError(`${tz.source} is set together with ${seconds.source}: a time zone applies only to a cron schedule (${ENV_PREFIX}${p}_CRON)`);
  if (tz && !cron && registration.schedule.kind !== 'cron') throw new ConfigError(`${tz.source} is set but family ${registration.family} has no cron schedule`);
  const on = enabled ? parse.bool(enabled.value.toLowerCase(), enabled.source) : undefined;
  // Legacy off: 0 on a built-in schedule key (never a refusal there).
  const secondsOff = builtin && seconds !== undefined && /^0+$/.test(seconds.value);
  if (secondsOff && on === true)
    throw new ConfigError(`${enabled!.source}=true contradicts ${seconds!.source}=0 (the legacy "off"): set a positive interval or leave the schedule off`);
  let schedule: SchedulePolicyDecl = registration.schedule;
  if (seconds && !secondsOff) schedule = { kind: 'interval', seconds: parse.seconds(seconds.value, seconds.source) };
  if (cron) {
    const timezone = tz?.value ?? (registration.schedule.kind === 'cron' ? registration.schedule.timezone : undefined);
    if (!timezone) throw new ConfigError(`${cron.source} needs ${ENV_PREFIX}${p}_TIMEZONE (an IANA time zone such as Asia/Shanghai)`);
    schedule = { kind: 'cron', expression: cron.value, timezone };
  } else if (tz && registration.schedule.kind === 'cron') {
    schedule = { ...registration.schedule, timezone: tz.value };
  }
  if (schedule.kind === 'cron') {
    // Name the variable that supplied the value, or the registration default it overrides.
    const tzVar = tz?.source ?? `the registered time zone of family ${registration.family} (${ENV_PREFIX}${p}_TIMEZONE)`;
    if (!isValidTimezone(schedule.timezone)) throw new ConfigError(`${tzVar} must be a valid IANA time zone, got ${JSON.stringify(schedule.timezone)}`);
    const problem = cronProblem(
      schedule.expression,
      schedule.timezone,
      cron?.source ?? `the registered cron of family ${registration.family} (${ENV_PREFIX}${p}_CRON)`,
    );
    if (problem) throw new ConfigError(problem);
  }
  if (on === false || secondsOff) return { kind: 'off' };
  if (on === true) {
    if (schedule.kind === 'off') {
      throw new ConfigError(
        `${enabled!.source}=true but family ${registration.family} has no interval or cron schedule (set ${ENV_PREFIX}${p}_SCHEDULE_SECONDS or ${ENV_PREFIX}${p}_CRON)`,
      );
    }
    return schedule;
  }
  if (!builtin) return schedule;
  // Built-in prefix, not enabled explicitly: on only through its own schedule keys (RFC 11).
  if (ENABLE_FLAG_ONLY.has(p)) return { kind: 'off' };
  return seconds || cron ? schedule : { kind: 'off' };
}
