import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { dbKinds } from '../helpers/app.ts';

// On SQLite a transaction runs on the client's one connection (runtime/db/client.ts): what it rolls
// back, and what runs beside it, must come out as if it had a connection of its own.
describe.each(dbKinds)('transactions (%s)', (kind) => {
  let database: TestDatabase;
  let db: Db;
  // a second client: it sees only what was committed
  let other: Db;
  let n = 0;
  const account = () => {
    n += 1;
    return { email: `tx${n}@example.com`, apiKeyHash: `tx-hash-${n}` };
  };
  const committed = async (email: string) => (await other.account.findUnique({ where: { email } })) !== null;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = createPrisma(database.url);
    other = createPrisma(database.url);
  });
  afterAll(async () => {
    await db?.$disconnect();
    await other?.$disconnect();
    await database?.drop();
  });

  it('commits a batch as a whole, and rolls a failing one back as a whole', async () => {
    const [a, b] = [account(), account()];
    await db.$transaction([db.account.create({ data: a }), db.account.create({ data: b })]);
    expect([await committed(a.email), await committed(b.email)]).toEqual([true, true]);

    const c = account();
    // the second insert repeats c's unique email
    await expect(
      db.$transaction([db.account.create({ data: c }), db.account.create({ data: { ...c, apiKeyHash: 'another' } })]),
    ).rejects.toThrow();
    expect(await committed(c.email)).toBe(false);

    // the connection is not left inside a transaction: a write after it is committed at once
    const d = account();
    await db.account.create({ data: d });
    expect(await committed(d.email)).toBe(true);
  });

  it('rolls back an interactive transaction that throws, while a write made beside it waits and is kept', async () => {
    const inside = account();
    const beside = account();
    let besideWrite: Promise<unknown> | undefined;
    await expect(
      db.$transaction(async (tx) => {
        await tx.account.create({ data: inside });
        besideWrite = db.account.create({ data: beside });
        // the write beside it has had every chance to run meanwhile: SQLite's waits for the transaction
        await new Promise((r) => setTimeout(r, 50));
        if (kind === 'sqlite') expect(await committed(beside.email)).toBe(false);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await besideWrite;
    expect(await committed(inside.email)).toBe(false);
    expect(await committed(beside.email)).toBe(true);

    const after = account();
    await db.$transaction(async (tx) => {
      await tx.account.create({ data: after });
    });
    expect(await committed(after.email)).toBe(true);
  });
});
