import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Prisma } from '../../src/generated/sqlite/client.ts';
import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { rawRows, rawWrites } from '../../src/runtime/db/raw-writes.ts';
import { createTemporaryDatabase } from '../../src/runtime/db/temporary-database.ts';
import type { TemporaryDatabase } from '../../src/runtime/db/temporary-database.ts';
import { dbKinds } from '../helpers/app.ts';

describe.each(dbKinds)('raw writes in one transaction (%s)', (kind) => {
  let database: TemporaryDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTemporaryDatabase(kind);
    db = createPrisma(database.url);
    await db.$executeRawUnsafe(`CREATE TABLE "RawT" ("id" TEXT PRIMARY KEY, "at" ${kind === 'postgres' ? 'TIMESTAMP(3)' : 'DATETIME'})`);
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  const insert = (id: string, at: Date | null = null) => Prisma.sql`INSERT INTO "RawT" ("id", "at") VALUES (${id}, ${at})`;
  const ids = async () => (await db.$queryRaw<Array<{ id: string }>>`SELECT "id" FROM "RawT" ORDER BY "id"`).map((r) => r.id);

  it('writes all or nothing: a failing statement leaves none of the others, and the connection outside any transaction', async () => {
    const raw = rawWrites(db);
    await raw([insert('a1'), insert('a2')]);
    await expect(raw([insert('b1'), insert('a1')])).rejects.toThrow();
    expect(await ids()).toEqual(['a1', 'a2']);
    // the next write, raw or Prisma's, is its own again
    await raw([insert('c1')]);
    await db.$executeRaw(insert('c2'));
    expect(await ids()).toEqual(['a1', 'a2', 'c1', 'c2']);
  });

  it('stores a time as Prisma does, so it compares with the rows Prisma wrote', async () => {
    const at = new Date('2026-11-29T11:00:00.123Z');
    await rawWrites(db)([insert('t-raw', at)]);
    await db.$executeRaw(insert('t-prisma', at));
    const found = await db.$queryRaw<Array<{ n: bigint | number }>>`SELECT COUNT(*) AS "n" FROM "RawT" WHERE "at" = ${at}`;
    expect(Number(found[0]?.n)).toBe(2);
  });

  it('on SQLite runs on the connection Prisma uses, under its lock, without a Prisma transaction', async () => {
    const transaction = vi.spyOn(db, '$transaction');
    const raw = rawWrites(db);
    // statements Prisma queued before and after the raw write all land, none inside it
    const around = [db.$executeRaw(insert('d0')), raw([insert('d1'), insert('d2')]), db.$executeRaw(insert('d3'))];
    await Promise.all(around);
    expect(await ids()).toEqual(expect.arrayContaining(['d0', 'd1', 'd2', 'd3']));
    expect(transaction).toHaveBeenCalledTimes(kind === 'sqlite' ? 0 : 1);
    transaction.mockRestore();
  });

  it.runIf(kind === 'postgres')(
    'writes two batches that deadlock on PostgreSQL both: the one PostgreSQL aborts runs again (skipped on SQLite: one connection, no deadlock)',
    async () => {
      await rawWrites(db)([insert('dl-a'), insert('dl-b')]);
      const touch = (id: string, at: string) => Prisma.sql`UPDATE "RawT" SET "at" = ${new Date(at)} WHERE "id" = ${id}`;
      // each holds one row, waits, then wants the other's: PostgreSQL aborts one with 40P01 after its deadlock_timeout
      const pause = Prisma.sql`SELECT pg_sleep(0.3)`;
      const raw = rawWrites(db);
      const outcomes = await Promise.allSettled([
        raw([touch('dl-a', '2026-01-01T00:00:00Z'), pause, touch('dl-b', '2026-01-01T00:00:00Z')]),
        raw([touch('dl-b', '2026-02-01T00:00:00Z'), pause, touch('dl-a', '2026-02-01T00:00:00Z')]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
      // whichever ran last set both rows: the two batches were each applied whole
      const rows = await db.$queryRaw<Array<{ at: Date }>>`SELECT "at" FROM "RawT" WHERE "id" IN ('dl-a', 'dl-b')`;
      expect(new Set(rows.map((r) => r.at.toISOString())).size).toBe(1);
    },
    20_000,
  );

  it('reads rows by column name, a timestamp as a time the row held, beside Prisma reads', async () => {
    const at = new Date('2026-11-29T10:00:00.250Z');
    await rawWrites(db)([insert('r1', at), insert('r2')]);
    const rows = await rawRows(db)<{ id: string; at: Date | string | null; again: string }>(
      Prisma.sql`SELECT "id", "at", "id" AS "again" FROM "RawT" WHERE "id" IN ('r1', 'r2') ORDER BY "id"`,
    );
    expect(rows.map((r) => ({ ...r, at: r.at === null ? null : new Date(r.at).toISOString() }))).toEqual([
      { id: 'r1', at: at.toISOString(), again: 'r1' },
      { id: 'r2', at: null, again: 'r2' },
    ]);
  });
});
