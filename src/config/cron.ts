/** Cron expression and IANA time zone checks shared by the configuration and the registry (A15). */
import { CronExpressionParser } from 'cron-parser';
import { ConfigError } from './database-url.ts';

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export function validateCron(expression: string, timezone: string, variable: string): void {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) throw new ConfigError(`${variable} must have 5 (or 6, with seconds) fields, got ${JSON.stringify(expression)}`);
  try {
    CronExpressionParser.parse(expression, { tz: timezone, currentDate: new Date() }).next();
  } catch (error) {
    throw new ConfigError(`${variable} is not a valid cron expression (${(error as Error).message})`);
  }
}
