/**
 * The commands of `apsup`: usage, options and the environment each reads. `apsup <command>
 * --help` prints one entry; main.ts parses each command's own options (an option of another
 * command is refused) and counts its arguments.
 */
import { DATABASE_URL_VARIABLE } from '../config/database-url.ts';
import { describeSettings, variableOf } from '../config/settings.ts';
import { LOG_FORMAT_VARIABLE, LOG_LEVEL_VARIABLE } from '../logging.ts';

export type OptionSpec = { type: 'string' | 'boolean'; short?: string; doc: string };

export interface CommandSpec {
  usage: string[];
  options: Record<string, OptionSpec>;
  env: string[];
  /** Longer text after the lists (run: every setting). */
  more?: () => string;
}

const json: OptionSpec = { type: 'boolean', doc: 'machine-readable output' };
const families: OptionSpec = { type: 'string', doc: `the families module (default ${variableOf('FAMILIES_MODULE')})` };
const DB = `${DATABASE_URL_VARIABLE} (default sqlite:./var/powercontext.sqlite)`;
const LOGS = [
  `${LOG_LEVEL_VARIABLE} (fatal|error|warn|info|debug|trace|silent; default info)`,
  `${LOG_FORMAT_VARIABLE} (json|pretty; default pretty on a terminal, else json)`,
];
const FAMILY_SETTINGS = `${variableOf('FAMILIES_MODULE')} and the families' settings (${variableOf('<PREFIX>_SCHEDULE_SECONDS')}, _CRON, _TIMEZONE, _SCHEDULE_ENABLED, _MAX_WORKERS, _WORKER_TIMEOUT_SECONDS)`;
const TASK_OPTIONS: Record<string, OptionSpec> = {
  payload: { type: 'string', doc: "submit: the JSON payload ('-' reads standard input)" },
  'payload-file': { type: 'string', doc: 'submit: read the JSON payload from a file' },
  'dedupe-key': { type: 'string', doc: 'submit: at most one live task per key' },
  'timeout-seconds': { type: 'string', doc: 'submit: lower the timeout of this task' },
  'handler-version': { type: 'string', doc: 'submit: the handler version to run' },
  state: { type: 'string', doc: 'list: only tasks in this state' },
  before: { type: 'string', doc: 'list: the page before this task id' },
  limit: { type: 'string', doc: 'list: tasks per page (1..1000, default 50)' },
  'older-than-days': { type: 'string', doc: 'prune: terminal tasks older than this' },
  json,
};

export const COMMANDS: Record<string, CommandSpec> = {
  migrate: {
    usage: [
      'apsup migrate up [--with-demo]',
      '                       apply pending migrations (and install stored procedures on MySQL/OceanBase);',
      "                       --with-demo also creates the reference families' demo tables (ref_*)",
      'apsup migrate down [--yes]',
      '                       revert the last applied migration (--yes: also when it drops tables holding rows)',
      'apsup migrate status [--json]',
      '                       list migrations and procedure checksums; exit 3 on drift',
      "apsup migrate sql      print exactly what 'migrate up' would run, for review (refuses where up refuses)",
      'apsup migrate adopt topic-memory-pr1490|profile-apscheduler [--dry-run] [--keep-legacy]',
      '                       [--job-id <id>] [--families <module>] [--json]',
      "                       convert a replaced scheduler's state in a maintenance window; exit 4 when refused",
    ],
    options: {
      json,
      families,
      yes: { type: 'boolean', doc: 'down: drop tables that hold rows' },
      'dry-run': { type: 'boolean', doc: 'adopt: print the plan, change nothing' },
      'keep-legacy': { type: 'boolean', doc: "adopt: keep the replaced scheduler's tables" },
      'job-id': { type: 'string', doc: 'adopt profile-apscheduler: the APScheduler job id' },
      'with-demo': { type: 'boolean', doc: "up: also create the reference families' demo tables (ref_*)" },
    },
    env: [DB, `${FAMILY_SETTINGS} (adopt)`],
  },
  run: {
    usage: [
      'apsup run --families <module> [--role all|api|background]',
      '          run the supervisors until SIGINT/SIGTERM (a second signal, 1.5 s or more after the',
      '          first, forces the exit after killing the workers, invalidating the term and releasing',
      '          the SQLite host lock); refuses while a migration',
      '          is pending or a procedure drifted',
    ],
    options: { families, role: { type: 'string', doc: `all | api | background (default ${variableOf('ARTIFACT_PROCESSING_ROLE')})` } },
    env: [FAMILY_SETTINGS, ...LOGS],
    more: () => `settings (every ${variableOf('*')}; unknown ones are reported as warnings):\n${describeSettings()}`,
  },
  start: {
    usage: ['apsup start            migrate, seed a small demo workload and run the reference families (Ctrl-C stops)'],
    options: {},
    env: [DB, ...LOGS],
  },
  trigger: {
    usage: ['apsup trigger <family> <scope>      accept an explicit request (requested generation + 1)'],
    options: { families },
    env: [DB, FAMILY_SETTINGS],
  },
  'mark-dirty': {
    usage: ['apsup mark-dirty <family> <scope>   mark ordinary work (dirty generation + 1)'],
    options: { families },
    env: [DB, FAMILY_SETTINGS],
  },
  'mode-switch': {
    usage: [
      'apsup mode-switch --to global|dedicated [--json]',
      '          switch the supervisor mode after every host of the old mode stopped: invalidates the',
      "          old mode's terms and records the new mode",
    ],
    options: { to: { type: 'string', doc: 'global | dedicated' }, families, json },
    env: [DB],
  },
  maintenance: {
    usage: [
      'apsup maintenance on|off|status [--json]',
      '          maintenance window: while on, dirty marks, explicit triggers and runtime starts are',
      '          refused (mode-switch ends it)',
    ],
    options: { json },
    env: [DB],
  },
  db: {
    usage: [
      'apsup db accounts [--check] [--json]',
      "          the accounts of processors' sessions (MySQL/OceanBase: created from an administrator URL,",
      '          or the documented ones) and what the database enforces; --check: exit 3 unless grants do',
    ],
    options: { check: { type: 'boolean', doc: 'create nothing; exit 3 unless the fencing is enforced by the database' }, json },
    env: [DB, 'POWERCONTEXT_SERVER_RUNTIME_PROCESSOR_DATABASE_URL, POWERCONTEXT_SERVER_RUNTIME_READER_DATABASE_URL (README "Database accounts")'],
  },
  status: {
    usage: ['apsup status --families <module> [--json]', '          recorded mode, supervisor terms and per-family schedule and backlog (reads only)'],
    options: { families, json },
    env: [DB, FAMILY_SETTINGS],
  },
  console: {
    usage: [
      'apsup console --families <module> [--listen host:port]',
      '          the web console and its JSON API (/api/) until SIGINT/SIGTERM, on --listen, else',
      `          ${variableOf('CONSOLE_ADDRESS')} when set, else 127.0.0.1:9465;`,
      `          actions need ${variableOf('CONSOLE_TOKEN')} (Authorization: Bearer);`,
      '          without it the console reads only, for loopback clients only',
    ],
    options: { families, listen: { type: 'string', doc: 'host:port to listen on (IPv6 as [::1]:9465; port 0 picks one)' } },
    env: [DB, FAMILY_SETTINGS, `${variableOf('CONSOLE_TOKEN')}, ${variableOf('CONSOLE_ADDRESS')}`, `${variableOf('TASKS_MODULE')} (cancel, resume)`, ...LOGS],
  },
  tasks: {
    usage: [
      "apsup tasks submit <type> [--payload '<json>' | --payload - | --payload-file <path>]",
      '                   [--dedupe-key K] [--timeout-seconds S] [--handler-version V]',
      'apsup tasks list [--state S] [--before ID] [--limit N] [--json]',
      'apsup tasks show|cancel|delete|resume <id>',
      'apsup tasks prune --older-than-days D',
      'apsup tasks set-capacity <n>  the database cap of running tasks across all processes (1..10000)',
      'apsup tasks worker           run a task worker until SIGINT/SIGTERM (apsup run includes one)',
    ],
    options: TASK_OPTIONS,
    env: [DB, `${variableOf('TASKS_MODULE')}, ${variableOf('DURABLE_TASK_*')} (apsup run --help lists them)`, ...LOGS],
  },
};

const GLOBAL = ['  -h, --help     this text (apsup <command> --help: that command)', '  --verbose      add the stack trace to an error (or APSUP_DEBUG=1)'];

export const EXIT_CODES = 'exit codes: 0 done, 1 unexpected (or the database cannot be reached), 2 bad input or configuration, 3 drift, 4 adoption refused';

export function generalUsage(): string {
  const lines = ['usage:'];
  for (const spec of Object.values(COMMANDS)) for (const u of spec.usage) lines.push(`  ${u}`);
  lines.push(
    '',
    'options:',
    ...GLOBAL,
    '',
    `database: ${DATABASE_URL_VARIABLE}=sqlite:<path> | mysql://user:pass@host:port/db | oceanbase://...`,
    '          (default sqlite:./var/powercontext.sqlite)',
    EXIT_CODES,
  );
  return lines.join('\n');
}

export function commandHelp(name: string): string {
  const spec = COMMANDS[name]!;
  const lines = ['usage:', ...spec.usage.map((u) => `  ${u}`), '', 'options:'];
  const width = Math.max(12, ...Object.keys(spec.options).map((o) => o.length + 2));
  for (const [option, o] of Object.entries(spec.options)) lines.push(`  ${`--${option}`.padEnd(width)}  ${o.type === 'string' ? '<value>  ' : ''}${o.doc}`);
  lines.push(...GLOBAL, '', 'environment:', ...spec.env.map((e) => `  ${e}`), '  APSUP_DEBUG=1 (stack traces on errors)');
  if (spec.more) lines.push('', spec.more());
  lines.push('', EXIT_CODES);
  return lines.join('\n');
}
