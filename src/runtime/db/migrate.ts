import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Logger } from 'pino';
import type { MigrationList } from './schema-engine.ts';
import { openEngine, withSqliteScripts } from './schema-engine.ts';

export type Provider = 'sqlite' | 'postgres';

export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const providerOf = (url: string): Provider => {
  if (url.startsWith('file:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  throw new Error(`DATABASE_URL must start with file: or postgres://, got ${url.split(':')[0]}:`);
};

export const prismaDir = (provider: Provider): string => join(PROJECT_ROOT, 'prisma', provider);
export const migrationsDir = (provider: Provider): string => join(prismaDir(provider), 'migrations');

/** A relative SQLite path is taken from the working directory, as users expect of `file:./data/app.db`. */
export const sqlitePath = (url: string): string => url.replace(/^file:(\/\/)?/, '').split('?')[0] ?? '';

export const adapterFactoryFor = (url: string): SqlMigrationAwareDriverAdapterFactory => {
  if (providerOf(url) === 'sqlite') {
    const dir = dirname(sqlitePath(url));
    if (dir && !existsSync(dir)) mkdirSync(dir, { recursive: true });
    return withSqliteScripts(new PrismaLibSql({ url }));
  }
  return new PrismaPg({ connectionString: url });
};

export const readMigrations = (provider: Provider): MigrationList => {
  const baseDir = migrationsDir(provider);
  const lockPath = join(baseDir, 'migration_lock.toml');
  const dirs = existsSync(baseDir)
    ? readdirSync(baseDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  return {
    baseDir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: readFileSync(join(baseDir, name, 'migration.sql'), 'utf8') } },
    })),
  };
};

const NO_FILTERS = { externalTables: [], externalEnums: [] };

/** Applies the committed migrations of the URL's provider; quick and idempotent, so it runs at every start. */
export const applyMigrations = async (url: string, logger?: Pick<Logger, 'info' | 'debug'>): Promise<string[]> => {
  const provider = providerOf(url);
  const handle = await openEngine(adapterFactoryFor(url));
  try {
    const { appliedMigrationNames } = await handle.engine.applyMigrations({ migrationsList: readMigrations(provider), filters: NO_FILTERS });
    if (appliedMigrationNames.length > 0) logger?.info({ provider, applied: appliedMigrationNames }, 'database migrated');
    else logger?.debug({ provider }, 'database schema is current');
    return appliedMigrationNames;
  } finally {
    handle.dispose();
  }
};

/** The SQL that takes a database from one datamodel to another; no database is touched. */
export const diffDatamodels = async (provider: Provider, from: string | null, to: string, engineUrl: string): Promise<string> => {
  const handle = await openEngine(adapterFactoryFor(engineUrl));
  try {
    const target = (content: string) => ({ tag: 'schemaDatamodel' as const, files: [{ path: join(prismaDir(provider), 'schema.prisma'), content }] });
    const result = (await handle.engine.diff({
      from: from === null ? { tag: 'empty' } : target(from),
      to: target(to),
      script: true,
      shadowDatabaseUrl: null,
      exitCode: null,
      filters: NO_FILTERS,
    } as unknown as Parameters<typeof handle.engine.diff>[0])) as { stdout?: string };
    return result.stdout ?? '';
  } finally {
    handle.dispose();
  }
};
