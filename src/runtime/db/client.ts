import type { Client, Config, TransactionMode } from '@libsql/client';
import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter } from '@prisma/driver-adapter-utils';
import { PrismaClient as PostgresClient } from '../../generated/postgres/client.ts';
import { PrismaClient as SqliteClient } from '../../generated/sqlite/client.ts';
import { providerOf } from './migrate.ts';

import type { Db } from '../ports/db.ts';

export type { Db };

export { providerOf };

const BUSY_TIMEOUT_MS = 5000;

/**
 * WAL lets readers run beside the writer, and synchronous=NORMAL syncs at checkpoints rather than at
 * every commit (a full sync per commit caps a session at ~80 msg/s). libsql opens a new connection
 * after every interactive transaction, so the per-connection setting is applied to each one; the
 * busy timeout goes through libsql's own option, which covers every connection.
 */
class TunedLibSql extends PrismaLibSql {
  override createClient(config: Config): Client {
    const client = super.createClient({ ...config, timeout: BUSY_TIMEOUT_MS });
    const transaction = client.transaction.bind(client);
    client.transaction = async (mode?: TransactionMode) => {
      const tx = await transaction(mode);
      // Reaches the connection that replaces the one the transaction took. Should libsql ever keep
      // using the same connection, SQLite refuses the pragma inside the transaction: harmless.
      await client.execute('PRAGMA synchronous = NORMAL').catch(() => undefined);
      return tx;
    };
    return client;
  }

  override async connect(): Promise<SqlDriverAdapter> {
    const adapter = await super.connect();
    await adapter.executeScript('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
    return adapter;
  }
}

export const createPrisma = (databaseUrl: string): Db => {
  if (providerOf(databaseUrl) === 'sqlite') return new SqliteClient({ adapter: new TunedLibSql({ url: databaseUrl }) });
  // Both clients are generated from the same models (prisma/schema.base.prisma), so their APIs match;
  // only TypeScript's nominal identity of the two classes differs, hence this one cast.
  // PostgreSQL's default random_page_cost (4) prices a page read as a disk seek, which makes a trigram
  // index look dearer than a full scan for a broad contact search (35 ms against 10); the service's data
  // is read from memory or SSD, for which 1.1 is the usual setting.
  return new PostgresClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, options: '-c random_page_cost=1.1' }),
  }) as unknown as Db;
};
