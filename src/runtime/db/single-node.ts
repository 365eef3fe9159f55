import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createClient } from '@libsql/client';
import { providerOf, sqlitePath } from './migrate.ts';

/** What `holdSingleNode` refuses with: a second node on one SQLite database. */
export class SecondNodeError extends Error {
  override name = 'SecondNodeError';
}

/**
 * SQLite is the single-node database: two service processes on one file would both link the same
 * sessions, and the network closes the older connection of a companion each time the other links.
 * The first node holds an exclusive lock on a file beside the database for as long as it runs (the
 * operating system releases it when the process ends, however it ends); a second node is refused at
 * start with what to do instead. PostgreSQL allows several nodes and takes no lock here.
 */
export const holdSingleNode = async (databaseUrl: string): Promise<{ release: () => Promise<void> }> => {
  if (providerOf(databaseUrl) !== 'sqlite') return { release: async () => undefined };
  const path = `${sqlitePath(databaseUrl)}.node-lock`;
  // The lock is taken before the migrations, which would make the database's folder: a fresh clone has no ./data.
  mkdirSync(dirname(path), { recursive: true });
  const lock = createClient({ url: `file:${path}` });
  try {
    await lock.execute('PRAGMA busy_timeout = 0');
    await lock.execute('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    const busy = /SQLITE_BUSY|database is locked/i.test(
      err instanceof Error ? `${err.message} ${String((err as { code?: unknown }).code)}` : '',
    );
    if (!busy) throw err;
    throw new SecondNodeError(
      `Another node of this service is running on ${sqlitePath(databaseUrl)} (it holds ${path}). SQLite allows one node: stop the other one, or use PostgreSQL (DATABASE_URL=postgresql://...) to run several.`,
    );
  }
  return {
    release: async () => {
      await lock.execute('ROLLBACK').catch(() => undefined);
      lock.close();
    },
  };
};
