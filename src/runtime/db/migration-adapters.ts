import { randomUUID } from 'node:crypto';
import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import type {
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
  SqlQuery,
  SqlQueryable,
  Transaction,
} from '@prisma/driver-adapter-utils';
import pg from 'pg';

// Driver adapters for the schema engine, with the fixes each needs to serve it (each fix says which
// engine or adapter bug it works around).

const statementCount = (sql: string): number =>
  sql
    .replace(/--.*$/gm, '')
    .split(';')
    .filter((part) => part.trim()).length;

/**
 * The engine replays migration files on the shadow database through a parameterless executeRaw,
 * which on SQLite runs only the first statement (and fails on a file of comments only): anything but
 * a single statement goes to executeScript instead.
 */
const runScriptsWhole = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
  const executeRaw = adapter.executeRaw.bind(adapter);
  adapter.executeRaw = async (query: SqlQuery) => {
    if (query.args.length > 0 || statementCount(query.sql) === 1) return executeRaw(query);
    await adapter.executeScript(query.sql);
    return 0;
  };
  return adapter;
};

export const sqliteMigrationAdapter = (url: string): SqlMigrationAwareDriverAdapterFactory => {
  const factory = new PrismaLibSql({ url });
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => runScriptsWhole(await factory.connect()),
    connectToShadowDb: async () => runScriptsWhole(await factory.connectToShadowDb()),
  };
};

const OID = { char: 18, name: 19, text: 25, charArray: 1002, nameArray: 1003, textArray: 1009 } as const;
type TypeId = Parameters<typeof pg.types.getTypeParser>[0];
// pg-types' TypeId enum lists scalar types only; text[] has a registered parser all the same.
const parseTextArray = pg.types.getTypeParser(OID.textArray as number as TypeId, 'text') as (value: string) => string[];

interface PgIo {
  performIO(query: SqlQuery): Promise<pg.QueryArrayResult>;
}

/**
 * adapter-pg cannot decode the catalog types "char" and name (and their arrays) that the engine
 * reads (prisma/orm#27403); they are text, so they are relabelled, arrays parsed, before the adapter
 * maps column types. performIO is private in adapter-pg 7.10 (pinned), hence the structural cast.
 */
const decodeCatalogTypes = <T extends SqlQueryable>(queryable: T): T => {
  const io = queryable as unknown as PgIo;
  const performIO = io.performIO.bind(io);
  io.performIO = async (query) => {
    const result = await performIO(query);
    result.fields.forEach((field, column) => {
      if (field.dataTypeID === OID.char || field.dataTypeID === OID.name) field.dataTypeID = OID.text;
      if (field.dataTypeID !== OID.charArray && field.dataTypeID !== OID.nameArray) return;
      field.dataTypeID = OID.textArray;
      for (const row of result.rows) {
        const value: unknown = row[column];
        if (typeof value === 'string') row[column] = parseTextArray(value);
      }
    });
    return result;
  };
  return queryable;
};

const decodeCatalogTypesInTransactions = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...args): Promise<Transaction> => decodeCatalogTypes(await startTransaction(...args));
  return decodeCatalogTypes(adapter);
};

export interface PostgresTarget {
  config: pg.PoolConfig;
  schema: string | undefined;
}

/**
 * Separate connection fields, because a connectionString silently overrides a `database` given
 * beside it, which a shadow database needs to set.
 */
export const postgresTarget = (url: string): PostgresTarget => {
  const parsed = new URL(url);
  const sslmode = parsed.searchParams.get('sslmode');
  return {
    config: {
      host: parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname.replace(/^\[|\]$/g, '')) || 'localhost'),
      port: parsed.port ? Number(parsed.port) : 5432,
      user: decodeURIComponent(parsed.username) || undefined,
      password: decodeURIComponent(parsed.password) || undefined,
      database: decodeURIComponent(parsed.pathname.slice(1)) || undefined,
      ssl:
        sslmode === 'require' || sslmode === 'no-verify' ? { rejectUnauthorized: false } : sslmode?.startsWith('verify') ? true : undefined,
    },
    schema: parsed.searchParams.get('schema') ?? undefined,
  };
};

const runAdminStatement = async (config: pg.ClientConfig, sql: string): Promise<void> => {
  const client = new pg.Client(config);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};

export const postgresMigrationAdapter = (url: string): SqlMigrationAwareDriverAdapterFactory => {
  const { config, schema } = postgresTarget(url);
  const options = schema ? { schema } : undefined;
  const factory = new PrismaPg(config, options);
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => decodeCatalogTypesInTransactions(await factory.connect()),
    // adapter-pg's own shadow database is dropped while its pool still holds connections, so the
    // drop fails and the database is left behind: close the pool first, then drop.
    connectToShadowDb: async () => {
      const database = `prisma_shadow_${randomUUID().replace(/-/g, '')}`;
      const drop = () => runAdminStatement(config, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await runAdminStatement(config, `CREATE DATABASE "${database}"`);
      const adapter = await new PrismaPg({ ...config, database }, options).connect().catch(async (err: unknown) => {
        await drop();
        throw err;
      });
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        try {
          await dispose();
        } finally {
          await drop();
        }
      };
      return decodeCatalogTypesInTransactions(adapter);
    },
  };
};
