import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Curve } from 'baileys';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import { loadAuthState } from '../src/runtime/network/auth-store.ts';
import { dbKinds } from './helpers/app.ts';

describe.each(dbKinds)('Signal key store (%s)', (kind) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Db;
  let sessionId: string;
  // Holds the store's writes until released, to read keys while their batch is on its way to disk.
  let gate: Promise<void> | undefined;
  // Statements the store has made.
  let executed = 0;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const real = createPrisma(database.url);
    db = new Proxy(real, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== '$executeRaw' || typeof value !== 'function') return value;
        executed += 1;
        return (...args: unknown[]) => (gate ?? Promise.resolve()).then(() => Reflect.apply(value, target, args));
      },
    });
    const account = await real.account.create({ data: { email: 'keys@example.com', apiKeyHash: 'h' } });
    sessionId = (await real.session.create({ data: { accountId: account.id, sessionName: 'keys' } })).id;
  });

  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it('reads pre-keys (which it does not cache) while their write is under way, and from disk after a reload', async () => {
    const store = await loadAuthState(db, sessionId);
    const preKeys = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [String(i + 1), Curve.generateKeyPair()]));
    let release: () => void = () => undefined;
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    await store.state.keys.set({ 'pre-key': preKeys });
    // The batch leaves the waiting list at the end of this turn and is held at the database.
    await new Promise((resolve) => setImmediate(resolve));
    const during = await store.state.keys.get('pre-key', ['1', '30', '31']);
    expect(Object.keys(during).sort()).toEqual(['1', '30']);
    expect(Buffer.from(during['30']?.public ?? []).equals(Buffer.from(preKeys['30'].public))).toBe(true);
    release();
    gate = undefined;
    await store.flush();

    const reloaded = await loadAuthState(db, sessionId);
    const after = await reloaded.state.keys.get('pre-key', ['1', '30']);
    expect(Buffer.from(after['1']?.private ?? []).equals(Buffer.from(preKeys['1'].private))).toBe(true);
    await reloaded.state.keys.set({ 'pre-key': { '1': null } });
    await reloaded.flush();
    expect(Object.keys(await (await loadAuthState(db, sessionId)).state.keys.get('pre-key', ['1', '30']))).toEqual(['30']);
  });

  it("writes the keys of several sessions in one statement, and a session whose write fails does not hold back the others'", async () => {
    const account = await db.account.create({ data: { email: 'keys-many@example.com', apiKeyHash: 'h2' } });
    const ids = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => (await db.session.create({ data: { accountId: account.id, sessionName: name } })).id),
    );
    const stores = await Promise.all(ids.map((id) => loadAuthState(db, id)));
    // A store whose session row is gone: its rows break the foreign key.
    const orphan = await loadAuthState(db, 'no-such-session');
    const before = executed;
    const token = (i: number) => ({ token: Buffer.from(`token-${i}`), timestamp: String(i) });
    await Promise.all(stores.map((store, i) => store.state.keys.set({ tctoken: { [`peer${i}`]: token(i) } })));
    await Promise.all(stores.map((store) => store.flush()));
    expect(executed - before).toBe(1);

    await Promise.all([
      orphan.state.keys.set({ tctoken: { peer: token(9) } }),
      ...stores.map((store, i) => store.state.keys.set({ tctoken: { [`peer${i}`]: token(i + 10) } })),
    ]);
    await Promise.all([orphan.flush(), ...stores.map((store) => store.flush())]);
    for (const [i, id] of ids.entries()) {
      const reloaded = await loadAuthState(db, id);
      const got = await reloaded.state.keys.get('tctoken', [`peer${i}`]);
      expect(Buffer.from(got[`peer${i}`]?.token ?? []).toString()).toBe(`token-${i + 10}`);
    }
    expect(await db.sessionAuth.count({ where: { sessionId: 'no-such-session' } })).toBe(0);
  });
});
