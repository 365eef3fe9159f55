import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient as PostgresClient } from '../../generated/postgres/client.ts';
import { PrismaClient as SqliteClient } from '../../generated/sqlite/client.ts';
import { providerOf } from './migrate.ts';

/** The client type the code is written against; both generated clients share its API. */
export type Db = SqliteClient;

export { providerOf };

export const createPrisma = (url: string): Db => {
  if (providerOf(url) === 'sqlite') return new SqliteClient({ adapter: new PrismaLibSql({ url }) });
  // The PostgreSQL client is generated from the same models, so its API is the SQLite one's; only
  // the types' nominal identity differs, hence this single cast.
  return new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as Db;
};
