import { applyMigrations } from './migrate.ts';
import type { TemporaryDatabase } from './temporary-database.ts';
import { createTemporaryDatabase } from './temporary-database.ts';

export type TestDatabase = TemporaryDatabase;

/**
 * A fresh database of its own with the migrations applied, for one test file: a temp SQLite file,
 * or a uniquely named database on TEST_POSTGRES_URL's server. Call drop() when done.
 */
export const createTestDatabase = async (kind: 'sqlite' | 'postgres'): Promise<TestDatabase> => {
  const database = await createTemporaryDatabase(kind);
  try {
    await applyMigrations(database.url);
  } catch (err) {
    await database.drop();
    throw err;
  }
  return database;
};
