import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient as PostgresClient } from '../../generated/postgres/client.ts';
import { PrismaClient as SqliteClient } from '../../generated/sqlite/client.ts';
import { providerOf } from './migrate.ts';

/** The client type the code is written against; both generated clients share its API. */
export type Db = SqliteClient;

export { providerOf };

export const createPrisma = async (url: string): Promise<Db> => {
  if (providerOf(url) === 'sqlite') {
    const db = new SqliteClient({ adapter: new PrismaLibSql({ url }) });
    // WAL lets readers run beside the writer, and NORMAL syncs at checkpoints rather than every
    // commit: a send writes its record twice, and a full sync each time caps a session at ~80 msg/s.
    await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
    await db.$executeRawUnsafe('PRAGMA synchronous = NORMAL');
    await db.$executeRawUnsafe('PRAGMA busy_timeout = 5000');
    return db;
  }
  // The PostgreSQL client is generated from the same models, so its API is the SQLite one's; only
  // the types' nominal identity differs, hence this single cast.
  return new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as Db;
};
