import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { testPostgresUrl } from '../settings.ts';
import type { Provider } from './migrate.ts';

export interface TemporaryDatabase {
  url: string;
  drop: () => Promise<void>;
}

/** The server on which temporary PostgreSQL databases are created (the project's machines and CI run one). */
export const postgresAdminUrl = (): string => testPostgresUrl();

const runAdmin = async (adminUrl: string, sql: string): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};

/** A new, empty database of its own: a SQLite file in a fresh temp folder, or a uniquely named PostgreSQL database. */
export const createTemporaryDatabase = async (kind: Provider, adminUrl = postgresAdminUrl()): Promise<TemporaryDatabase> => {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wa-db-'));
    return { url: `file:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `tmp_${randomUUID().replace(/-/g, '')}`;
  await runAdmin(adminUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => runAdmin(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
};

/** Runs work against a temporary database and always drops it. */
export const withTemporaryDatabase = async <T>(kind: Provider, work: (url: string) => Promise<T>): Promise<T> => {
  const database = await createTemporaryDatabase(kind);
  try {
    return await work(database.url);
  } finally {
    await database.drop();
  }
};
