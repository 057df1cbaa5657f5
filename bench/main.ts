/**
 * npm run bench -- <suite> [--backend sqlite|mysql] [--scopes N[,N...]] [--repeat R] [--page P]
 * Figures are printed and written to bench/results/; nothing here is asserted.
 */
import { parseArgs } from 'node:util';
import type { Backend } from '../src/store/types.ts';
import { runScanSuite } from './suites/scan.ts';
import { runFenceSuite } from './suites/fence.ts';

const USAGE = `usage: npm run bench -- <suite> [options]
suites:
  scan    admitted scopes/s of one automatic scan over N dirty scopes, and peak RSS
  fence   fenced vs unfenced business commits/s with W concurrent workers
options:
  --backend sqlite|mysql   one backend (default: both)
  --scopes N[,N...]        backlog sizes (default: scan 10000,100000 on both)
  --repeat R               repetitions, the median is printed (default 3)
  --page P                 scan page size (default 500)
  --workers W              concurrent workers (fence, default 8)
  --duration MS            measuring window per repetition (fence, default 2000)`;

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      backend: { type: 'string' },
      scopes: { type: 'string' },
      repeat: { type: 'string', default: '3' },
      page: { type: 'string', default: '500' },
      workers: { type: 'string', default: '8' },
      duration: { type: 'string', default: '2000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const suite = positionals[0];
  if (values.help || !suite) {
    console.log(USAGE);
    return suite ? 0 : 2;
  }
  const backends: Backend[] = values.backend ? [values.backend as Backend] : ['sqlite', 'mysql'];
  if (!backends.every((b) => b === 'sqlite' || b === 'mysql')) {
    console.error('--backend must be sqlite or mysql');
    return 2;
  }
  const repeat = Number(values.repeat);
  const page = Number(values.page);
  const parsedScopes = values.scopes?.split(',').map((s) => Number(s.trim()));
  if (parsedScopes && !parsedScopes.every((n) => Number.isInteger(n) && n > 0)) {
    console.error('--scopes must be positive integers');
    return 2;
  }
  switch (suite) {
    case 'scan': {
      const sizes = { sqlite: parsedScopes ?? [10_000, 100_000], mysql: parsedScopes ?? [10_000, 100_000] };
      await runScanSuite({ backends, sizes, repeat, pageSize: page });
      return 0;
    }
    case 'fence':
      await runFenceSuite({ backends, workers: Number(values.workers), repeat, durationMs: Number(values.duration) });
      return 0;
    default:
      console.error(`unknown suite ${JSON.stringify(suite)}\n${USAGE}`);
      return 2;
  }
}

main().then((code) => { process.exitCode = code; }, (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
