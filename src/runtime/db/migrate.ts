import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Logger } from 'pino';
import { postgresMigrationAdapter, sqliteMigrationAdapter } from './migration-adapters.ts';
import type { MigrationList } from './schema-engine.ts';
import { NO_FILTERS, withSchemaEngine } from './schema-engine.ts';

export type Provider = 'sqlite' | 'postgres';

export const providerOf = (url: string): Provider => {
  if (url.startsWith('file:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  throw new Error(`DATABASE_URL must start with file:, postgres:// or postgresql://, got ${url.split(':')[0]}:`);
};

const PRISMA_DIR = fileURLToPath(new URL('../../../prisma/', import.meta.url));

/** prisma/sqlite or prisma/postgres: the provider's schema.prisma and migrations folder. */
export const prismaDir = (provider: Provider): string => join(PRISMA_DIR, provider);
export const migrationsDir = (provider: Provider): string => join(prismaDir(provider), 'migrations');

/** The file of a SQLite URL; a relative one is taken from the working directory, as `file:./data/app.db` reads. */
export const sqlitePath = (url: string): string => url.replace(/^file:(\/\/(?=\/))?/, '').split('?')[0] ?? '';

export const migrationAdapterFor = (url: string): SqlMigrationAwareDriverAdapterFactory => {
  if (providerOf(url) === 'postgres') return postgresMigrationAdapter(url);
  mkdirSync(dirname(sqlitePath(url)), { recursive: true });
  return sqliteMigrationAdapter(url);
};

export const readMigrations = (provider: Provider): MigrationList => {
  const baseDir = migrationsDir(provider);
  const lockPath = join(baseDir, 'migration_lock.toml');
  const names = existsSync(baseDir)
    ? readdirSync(baseDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(baseDir, entry.name, 'migration.sql')))
        .map((entry) => entry.name)
        .sort()
    : [];
  return {
    baseDir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => ({
      path: name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: readFileSync(join(baseDir, name, 'migration.sql'), 'utf8') } },
    })),
  };
};

/**
 * Applies the committed migrations of the URL's provider that the database lacks; returns their
 * names. Idempotent and quick on a current database, so it runs at every start.
 */
export const applyMigrations = async (databaseUrl: string, logger?: Pick<Logger, 'info' | 'debug'>): Promise<string[]> => {
  const provider = providerOf(databaseUrl);
  const started = performance.now();
  const { appliedMigrationNames } = await withSchemaEngine(
    migrationAdapterFor(databaseUrl),
    (engine) => engine.applyMigrations({ migrationsList: readMigrations(provider), filters: NO_FILTERS }),
    logger,
  );
  const ms = Math.round(performance.now() - started);
  if (appliedMigrationNames.length > 0) logger?.info({ provider, applied: appliedMigrationNames, ms }, 'database migrated');
  else logger?.debug({ provider, ms }, 'database schema is current');
  return appliedMigrationNames;
};
