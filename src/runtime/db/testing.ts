import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { applyMigrations } from './migrate.ts';

export interface TestDatabase {
  url: string;
  drop: () => Promise<void>;
}

const adminUrl = () => process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const withAdmin = async (run: (client: pg.Client) => Promise<void>): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await run(client);
  } finally {
    await client.end();
  }
};

/** A fresh, migrated database of its own for one test file, dropped afterwards. */
export const createTestDatabase = async (kind: 'sqlite' | 'postgres'): Promise<TestDatabase> => {
  const name = `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  if (kind === 'sqlite') {
    const file = join(tmpdir(), `${name}.db`);
    const url = `file:${file}`;
    await applyMigrations(url);
    return {
      url,
      drop: async () => {
        for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`).then(() => undefined));
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  await applyMigrations(url.toString());
  return {
    url: url.toString(),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)),
  };
};
