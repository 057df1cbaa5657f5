/**
 * Child process for the MySQL fenced-transaction liveness tests (test/contract/suites/paused-worker.ts).
 *
 *   POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL=mysql://... node --import tsx test/helpers/mysql-fenced-child.ts
 *
 * Opens its store the way a worker process does (openStoreLazily from the environment, so the
 * lease TTL variable sets the server-side transaction bound) and runs one JSON command per stdin
 * line: { "id": n, "op": "...", ...arguments }. Each command gets one final stdout line:
 * { "id": n, "ok": true, "result": ... } or { "id": n, "ok": false, "code", "message" };
 * `hold` also emits { "id": n, "event": "held" } once its writes are done.
 *
 * Commands:
 *   ready                                answers { pid } once the store is open
 *   hold {term, binding, scope}          Store.fencedTransaction (ctx.commit's path): markDirty,
 *                                        event "held", then waits for "release"; answers after
 *                                        COMMIT (or with the error of the commit)
 *   release {}                           lets the held transaction go on to its COMMIT
 *   exit                                 closes the store and exits
 */
import readline from 'node:readline';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { StoreError } from '../../src/store/errors.ts';
import { openStoreLazily } from '../../src/store/open-lazy.ts';
import type { Term } from '../../src/store/types.ts';

const store = await openStoreLazily(parseDatabaseUrl(process.env.POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL));
let release: (() => void) | null = null;

function send(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function execute(cmd: { id: number; op: string; [key: string]: unknown }): Promise<unknown> {
  switch (cmd.op) {
    case 'ready':
      return { pid: process.pid };
    case 'hold':
      return store.fencedTransaction(cmd.term as Term, async (tx) => {
        const marked = await store.markDirty(cmd.binding as string, cmd.scope as string, tx);
        const released = new Promise<void>((r) => {
          release = r;
        });
        send({ id: cmd.id, event: 'held', dirtyGeneration: marked.dirtyGeneration });
        await released;
        return { dirtyGeneration: marked.dirtyGeneration };
      });
    case 'release':
      if (!release) throw new Error('nothing is held');
      release();
      release = null;
      return {};
    case 'exit':
      await store.close();
      setImmediate(() => process.exit(0));
      return {};
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const cmd = JSON.parse(line) as { id: number; op: string };
  execute(cmd).then(
    (result) => send({ id: cmd.id, ok: true, result }),
    (error: unknown) =>
      send({
        id: cmd.id,
        ok: false,
        code: error instanceof StoreError ? error.code : ((error as { code?: unknown }).code ?? null),
        message: (error as Error).message ?? String(error),
      }),
  );
});
