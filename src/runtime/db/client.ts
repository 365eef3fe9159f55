import { LibsqlError } from '@libsql/client';
import type { Client, Config, InStatement, ResultSet, Transaction, TransactionMode } from '@libsql/client';
import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter } from '@prisma/driver-adapter-utils';
import { PrismaClient as PostgresClient } from '../../generated/postgres/client.ts';
import { PrismaClient as SqliteClient } from '../../generated/sqlite/client.ts';
import { providerOf } from './migrate.ts';
import { registerSqliteConnection } from './raw-writes.ts';
import type { AdapterLock, SqliteConnection } from './raw-writes.ts';

import type { Db } from '../ports/db.ts';

export type { Db };

export { providerOf };

const BUSY_TIMEOUT_MS = 5000;

const BEGIN: Record<TransactionMode, string> = { write: 'BEGIN IMMEDIATE', read: 'BEGIN TRANSACTION READONLY', deferred: 'BEGIN DEFERRED' };

/**
 * A transaction on the client's own connection. libsql's hands its connection to the transaction and
 * opens a new one for what follows (a file open and a schema read: about a millisecond per
 * transaction), so that statements outside it cannot land inside it; Prisma's adapter already
 * excludes them, holding its lock from the transaction's start to its end. On any failure to end it,
 * a ROLLBACK leaves the connection outside any transaction.
 */
const sameConnectionTransaction = async (client: Client, mode: TransactionMode = 'write'): Promise<Transaction> => {
  await client.execute(BEGIN[mode]);
  let open = true;
  const live = () => {
    if (!open) throw new LibsqlError('The transaction is closed', 'TRANSACTION_CLOSED');
  };
  const rollback = async () => {
    if (!open) return;
    open = false;
    await client.execute('ROLLBACK');
  };
  return {
    execute: (stmt: InStatement) => {
      live();
      return client.execute(stmt);
    },
    batch: async (stmts: InStatement[]) => {
      const results: ResultSet[] = [];
      for (const stmt of stmts) {
        live();
        results.push(await client.execute(stmt));
      }
      return results;
    },
    executeMultiple: () => Promise.reject(new LibsqlError('executeMultiple is not used inside a transaction here', 'NOT_IMPLEMENTED')),
    rollback,
    commit: async () => {
      live();
      try {
        await client.execute('COMMIT');
        open = false;
      } catch (err) {
        // SQLite may leave the transaction open after a failed COMMIT (SQLITE_BUSY)
        await rollback().catch(() => undefined);
        throw err;
      }
    },
    close: () => {
      void rollback().catch(() => undefined);
    },
    get closed() {
      return !open;
    },
  };
};

/**
 * WAL lets readers run beside the writer, and synchronous=NORMAL syncs at checkpoints rather than at
 * every commit (a full sync per commit caps a session at ~80 msg/s). The busy timeout goes through
 * libsql's own option.
 */
class TunedLibSql extends PrismaLibSql {
  /** the connection and the adapter's lock, for raw-writes.ts */
  connection: SqliteConnection | null = null;
  private client: Client | null = null;

  override createClient(config: Config): Client {
    const client = super.createClient({ ...config, timeout: BUSY_TIMEOUT_MS });
    client.transaction = (mode?: TransactionMode) => sameConnectionTransaction(client, mode);
    this.client = client;
    return client;
  }

  override async connect(): Promise<SqlDriverAdapter> {
    const adapter = await super.connect();
    await adapter.executeScript('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
    const lock = adapterLock(adapter);
    if (this.client && lock) this.connection = { client: this.client, lock };
    return adapter;
  }
}

/**
 * The adapter's lock: a private symbol-keyed async-mutex Mutex of @prisma/adapter-libsql's queryable. Not found (a
 * change of the adapter), raw writes go through Prisma; test/unit/raw-writes.test.ts fails then.
 */
const adapterLock = (adapter: SqlDriverAdapter): AdapterLock | null => {
  const record = adapter as unknown as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(adapter)) {
    const value = record[key] as Partial<Record<'acquire' | 'runExclusive' | 'isLocked', unknown>> | null;
    if (value && typeof value.acquire === 'function' && typeof value.runExclusive === 'function' && typeof value.isLocked === 'function')
      return value as unknown as AdapterLock;
  }
  return null;
};

export const createPrisma = (databaseUrl: string): Db => {
  if (providerOf(databaseUrl) === 'sqlite') {
    const adapter = new TunedLibSql({ url: databaseUrl });
    const db = new SqliteClient({ adapter });
    registerSqliteConnection(db, () => adapter.connection);
    return db;
  }
  // Both clients are generated from the same models (prisma/schema.base.prisma), so their APIs match;
  // only TypeScript's nominal identity of the two classes differs, hence this one cast.
  // PostgreSQL's default random_page_cost (4) prices a page read as a disk seek, which makes a trigram
  // index look dearer than a full scan for a broad contact search (35 ms against 10); the service's data
  // is read from memory or SSD, for which 1.1 is the usual setting.
  return new PostgresClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, options: '-c random_page_cost=1.1' }),
  }) as unknown as Db;
};
