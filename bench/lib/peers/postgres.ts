/** PostgreSQL for the peers: reachability and the durability setting (synchronous_commit, fsync). */
import pg from 'pg';
import { redactUrl } from './types.ts';

export const PG_URL = process.env.APSUP_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** null when PostgreSQL answers, else the reason. */
export async function postgresDown(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `PostgreSQL at ${redactUrl(PG_URL)} does not answer (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function postgresDurability(pool: pg.Pool): Promise<string> {
  const sc = await pool.query('SHOW synchronous_commit');
  const fs = await pool.query('SHOW fsync');
  return `synchronous_commit=${sc.rows[0].synchronous_commit}, fsync=${fs.rows[0].fsync}`;
}
