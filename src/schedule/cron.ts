/**
 * Cron expression and IANA time zone checks (A15), shared by the configuration (src/config) and
 * the registry (src/registry). A module of its own, importing neither: the registry validates
 * registrations without loading the configuration, and the configuration reads registrations.
 */
import { requirePackage } from '../paths.ts';

let parser: typeof import('cron-parser').CronExpressionParser | undefined;
/** cron-parser, loaded by the first cron check (a command without cron schedules never loads it). */
function cronParser(): typeof import('cron-parser').CronExpressionParser {
  parser ??= (requirePackage('cron-parser') as typeof import('cron-parser')).CronExpressionParser;
  return parser;
}

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with a cron expression in a time zone (`what` names its source), or null. */
export function cronProblem(expression: string, timezone: string, what: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return `${what} must have 5 (or 6, with seconds) fields, got ${JSON.stringify(expression)}`;
  try {
    cronParser().parse(expression, { tz: timezone, currentDate: new Date() }).next();
    return null;
  } catch (error) {
    return `${what} is not a valid cron expression (${(error as Error).message})`;
  }
}

/** The latest fire at or before `dbNow` (the policy of a cron check: missed fires merge into one). */
export function cronFireAtOrBefore(expression: string, timezone: string, dbNow: Date): Date {
  return cronParser()
    .parse(expression, { currentDate: new Date(dbNow.getTime() + 1), tz: timezone })
    .prev()
    .toDate();
}

/** The first fire after `dbNow`. */
export function cronFireAfter(expression: string, timezone: string, dbNow: Date): Date {
  return cronParser().parse(expression, { currentDate: dbNow, tz: timezone }).next().toDate();
}

/** The latest fire strictly before `at`. */
export function cronFireBefore(expression: string, timezone: string, at: Date): Date {
  return cronParser().parse(expression, { currentDate: at, tz: timezone }).prev().toDate();
}
