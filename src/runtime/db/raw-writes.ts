import type { Client, InStatement, InValue } from '@libsql/client';
import type { Prisma } from '../../generated/sqlite/client.ts';
import type { Db, RawWrites } from '../ports/db.ts';

/** Prisma's driver adapter's own lock (an async-mutex Mutex): it holds it around every statement and transaction. */
export interface AdapterLock {
  acquire: () => Promise<() => void>;
}

/** The libsql connection of a SQLite client and the adapter's lock over it, once Prisma has connected. */
export interface SqliteConnection {
  client: Client;
  lock: AdapterLock;
}

const connections = new WeakMap<Db, () => SqliteConnection | null>();

/** db/client.ts registers each SQLite client it makes; others (PostgreSQL) write through Prisma. */
export const registerSqliteConnection = (db: Db, connection: () => SqliteConnection | null): void => {
  connections.set(db, connection);
};

/** A value as Prisma's libsql adapter binds it: a Date as ISO 8601 with +00:00 (what the columns hold). */
const argOf = (value: unknown): InValue =>
  value instanceof Date ? value.toISOString().replace('Z', '+00:00') : value === undefined ? null : (value as InValue);

const statementOf = (sql: Prisma.Sql): InStatement => ({ sql: sql.sql, args: sql.values.map(argOf) });

/**
 * A PostgreSQL transaction that lost to another (a deadlock, 40P01, or a serialization failure, 40001) was
 * rolled back whole; Prisma reports it as P2034 from a transaction, or as the raw query's own code.
 */
const isConflict = (err: unknown): boolean => {
  const e = err as { code?: unknown; meta?: { code?: unknown }; message?: unknown } | null;
  if (!e) return false;
  if (e.code === 'P2034' || e.meta?.code === '40P01' || e.meta?.code === '40001') return true;
  return typeof e.message === 'string' && /Code: `(40P01|40001)`/.test(e.message);
};

const CONFLICT_ATTEMPTS = 5;

/**
 * Runs a write again when PostgreSQL rolled it back for a conflict with another transaction (up to
 * CONFLICT_ATTEMPTS in all, a short random pause between): the batch writers (SENT marks, receipts, the
 * received messages, the outbox) run on different pooled connections and can lock the same rows in
 * different orders, and PostgreSQL then aborts one of them. Without this, a receipt whose batch lost
 * was dropped (logged, never written). The writes passed here are whole transactions: a retry repeats
 * exactly what was rolled back.
 */
export const runAgainOnConflict = async <T>(write: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= CONFLICT_ATTEMPTS || !isConflict(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10 * attempt));
    }
  }
};

/**
 * Raw statements in one transaction. On SQLite they run on Prisma's own connection, under its adapter's
 * lock (so no Prisma statement runs between them), as `BEGIN IMMEDIATE`, the statements, `COMMIT`: Prisma's
 * `$transaction` costs about 250 µs of CPU above that for two statements, and each `$executeRaw` about
 * 60 µs above libsql's own `execute` (scratch measurements, 3,000 calls each), which the hot batch writes
 * (SENT marks, receipts, webhook outcomes with their outbox rows) pay every group. Elsewhere (PostgreSQL,
 * or before Prisma connected) it is Prisma's `$transaction`.
 */
export const rawWrites = (db: Db): RawWrites => {
  const viaPrisma: RawWrites = (statements) =>
    runAgainOnConflict(async () => {
      if (statements.length === 1 && statements[0]) await db.$executeRaw(statements[0]);
      else if (statements.length > 1) await db.$transaction(statements.map((s) => db.$executeRaw(s)));
    });
  const connection = connections.get(db);
  if (!connection) return viaPrisma;
  return async (statements) => {
    const sqlite = connection();
    if (!sqlite) return viaPrisma(statements);
    if (statements.length === 0) return;
    const { client, lock } = sqlite;
    const release = await lock.acquire();
    try {
      if (statements.length === 1 && statements[0]) {
        await client.execute(statementOf(statements[0]));
        return;
      }
      await client.execute('BEGIN IMMEDIATE');
      try {
        for (const s of statements) await client.execute(statementOf(s));
        await client.execute('COMMIT');
      } catch (err) {
        // SQLite may leave the transaction open after a failed statement or COMMIT (SQLITE_BUSY)
        await client.execute('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } finally {
      release();
    }
  };
};

/**
 * Rows of one raw query, as plain objects by column name. On SQLite it runs on Prisma's own connection
 * under its adapter's lock, as rawWrites does, and its values are SQLite's own (a timestamp is its ISO
 * text, an integer a number): Prisma's `$queryRaw` cost 16.7 µs a row of the sinks' outbox against 8.7
 * this way (docs/benchmarks.md, Event sinks). Elsewhere it is `$queryRaw`.
 */
export const rawRows = (db: Db): (<T>(sql: Prisma.Sql) => Promise<T[]>) => {
  const connection = connections.get(db);
  return async <T>(sql: Prisma.Sql): Promise<T[]> => {
    const sqlite = connection?.();
    if (!sqlite) return db.$queryRaw<T[]>(sql);
    const release = await sqlite.lock.acquire();
    try {
      const { columns, rows } = await sqlite.client.execute(statementOf(sql));
      return rows.map((row) => {
        const record: Record<string, unknown> = {};
        for (let i = 0; i < columns.length; i++) record[columns[i] as string] = row[i];
        return record as T;
      });
    } finally {
      release();
    }
  };
};
