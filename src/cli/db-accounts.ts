/**
 * `apsup db accounts [--check] [--json]` (issue 40, README "Database accounts"): which accounts
 * the processors' and task handlers' sessions run on and what the database enforces with them.
 * With one administrator URL it creates the derived processor and reader accounts (or re-grants
 * the business tables created since); with the documented accounts it reads what each may do.
 * `--check` creates nothing and exits 3 unless the fencing is enforced by grants (or SQLite's
 * engine). `apsup migrate up` runs the same step after its migrations on MySQL/OceanBase.
 */
import { readSetting } from '../config/settings.ts';
import { fencingSummary, resolveSessionAccounts, type SessionAccounts } from '../store/session-accounts.ts';
import { EXIT } from './errors.ts';

export interface DbAccountsOptions {
  check?: boolean;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The report, without passwords. */
export function accountsReport(a: SessionAccounts): Record<string, unknown> {
  const user = (t: SessionAccounts['processor']) => (t.backend === 'mysql' ? t.user : null);
  return { setup: a.setup, source: a.source, summary: fencingSummary(a), processor: user(a.processor), reader: user(a.reader), problems: a.problems };
}

export async function dbAccountsCommand(action: string | undefined, options: DbAccountsOptions = {}): Promise<number> {
  if (action !== 'accounts') {
    const { UsageError } = await import('./errors.ts');
    throw new UsageError(`db needs accounts${action === undefined ? '' : `, got ${JSON.stringify(action)}`} (apsup db --help)`);
  }
  const env = options.env ?? process.env;
  const accounts = await resolveSessionAccounts(readSetting('DATABASE_URL', env), env, { provision: !options.check });
  const report = accountsReport(accounts);
  if (options.json) console.log(JSON.stringify(report, null, 2));
  else {
    console.log(report.summary);
    for (const p of accounts.problems) console.log(`  ${p}`);
  }
  return options.check && accounts.setup === 'filtered' ? EXIT.drift : EXIT.ok;
}
