import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { loadAuthState } from '../../src/runtime/network/auth-store.ts';

describe('auth store (Baileys credentials and Signal keys in SQLite)', () => {
  let database: TestDatabase;
  let db: Db;
  let accountId: string;
  let sessionId: string;

  const keyRows = () => db.sessionAuth.count({ where: { sessionId, type: { not: 'creds' } } });

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    db = createPrisma(database.url);
    const account = await db.account.create({ data: { email: 'auth-store@example.com', apiKeyHash: randomUUID() } });
    accountId = account.id;
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });
  beforeEach(async () => {
    // A session of its own per test, so row counts only see that test's writes.
    const session = await db.session.create({ data: { accountId, sessionName: `s-${randomUUID()}` } });
    sessionId = session.id;
  });

  it('serves a key it was just given before anything reached the database', async () => {
    const store = await loadAuthState(db, sessionId);
    const token = { token: Buffer.from([7, 8, 9]), timestamp: '1700000000' };
    // Queued before set(), so it runs before the write-behind that set() schedules for this turn's end.
    let turnEnded = false;
    setImmediate(() => {
      turnEnded = true;
    });
    void store.state.keys.set({ tctoken: { 'a.0': token } });
    const read = await store.state.keys.get('tctoken', ['a.0']);
    expect(read).toEqual({ 'a.0': token });
    expect(turnEnded).toBe(false);
    await store.flush();
    expect(await keyRows()).toBe(1);
  });

  it('after flush, a fresh load of the session reads the keys back, Buffers included', async () => {
    const store = await loadAuthState(db, sessionId);
    const token = { token: Buffer.from([1, 2, 3]), timestamp: '1700000000' };
    const record = Buffer.from([4, 5, 6, 7]);
    await store.state.keys.set({ tctoken: { 'a.0': token }, session: { 'a.0': record } });
    await store.flush();
    expect(await keyRows()).toBe(2);

    const reloaded = await loadAuthState(db, sessionId);
    const tokens = await reloaded.state.keys.get('tctoken', ['a.0']);
    expect(tokens).toEqual({ 'a.0': token });
    expect(Buffer.isBuffer(tokens['a.0']?.token)).toBe(true);
    expect(await reloaded.state.keys.get('session', ['a.0'])).toEqual({ 'a.0': record });
  });

  it('writes behind on its own at the end of the turn, without an explicit flush', async () => {
    const store = await loadAuthState(db, sessionId);
    await store.state.keys.set({ session: { 'a.0': Buffer.from([1]) } });
    const until = Date.now() + 5_000;
    while ((await keyRows()) === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(await keyRows()).toBe(1);
  });

  it('keeps only the last value when one key is set several times before the write', async () => {
    const store = await loadAuthState(db, sessionId);
    void store.state.keys.set({ session: { 'a.0': Buffer.from([1]) } });
    void store.state.keys.set({ session: { 'a.0': Buffer.from([2]) } });
    await store.flush();
    expect(await keyRows()).toBe(1);
    const reloaded = await loadAuthState(db, sessionId);
    expect(await reloaded.state.keys.get('session', ['a.0'])).toEqual({ 'a.0': Buffer.from([2]) });
  });

  it('deletes a key set to null', async () => {
    const store = await loadAuthState(db, sessionId);
    await store.state.keys.set({ session: { 'a.0': Buffer.from([1]), 'b.0': Buffer.from([2]) } });
    await store.flush();
    expect(await keyRows()).toBe(2);

    await store.state.keys.set({ session: { 'a.0': null } });
    expect(await store.state.keys.get('session', ['a.0'])).toEqual({});
    await store.flush();
    expect(await keyRows()).toBe(1);

    const reloaded = await loadAuthState(db, sessionId);
    expect(await reloaded.state.keys.get('session', ['a.0'])).toEqual({});
    expect(await reloaded.state.keys.get('session', ['b.0'])).toEqual({ 'b.0': Buffer.from([2]) });
  });

  it('writes every key of many set() calls made in one turn', async () => {
    const store = await loadAuthState(db, sessionId);
    const ids = Array.from({ length: 20 }, (_, i) => `${i}.0`);
    const sets = ids.map((id, i) => store.state.keys.set({ session: { [id]: Buffer.from([i]) } }));
    await Promise.all(sets);
    await store.flush();
    expect(await keyRows()).toBe(20);

    const reloaded = await loadAuthState(db, sessionId);
    const read = await reloaded.state.keys.get('session', ids);
    expect(Object.keys(read).sort()).toEqual([...ids].sort());
    expect(read['13.0']).toEqual(Buffer.from([13]));
  });

  it('drop() drops the writes that had not reached the database', async () => {
    const store = await loadAuthState(db, sessionId);
    await store.state.keys.set({ session: { 'kept.0': Buffer.from([1]) } });
    await store.flush();

    void store.state.keys.set({ session: { 'dropped.0': Buffer.from([2]) } });
    await store.drop();
    await store.flush();

    expect(await keyRows()).toBe(1);
    const reloaded = await loadAuthState(db, sessionId);
    expect(await reloaded.state.keys.get('session', ['dropped.0', 'kept.0'])).toEqual({ 'kept.0': Buffer.from([1]) });
  });

  it('drop() resolves only after a write under way has landed, so a delete after it leaves nothing behind', async () => {
    // Writes that take a while, as the 812 pre-keys of a new link do on a busy database.
    const slow = new Proxy(db, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop);
        if (prop !== '$executeRaw' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await new Promise((r) => setTimeout(r, 40));
          return Reflect.apply(value, target, args);
        };
      },
    });
    const store = await loadAuthState(slow, sessionId);
    void store.state.keys.set({ 'pre-key': { '1': { public: Buffer.from([1]), private: Buffer.from([2]) } } });
    void store.saveCreds();
    // The write-behind has started and is waiting on the database.
    await new Promise((r) => setImmediate(r));
    await store.drop();
    await db.sessionAuth.deleteMany({ where: { sessionId } });
    await new Promise((r) => setTimeout(r, 100));
    expect(await db.sessionAuth.count({ where: { sessionId } })).toBe(0);
  });

  it('writes nothing after drop(), neither keys nor credentials', async () => {
    const store = await loadAuthState(db, sessionId);
    await store.drop();
    await store.state.keys.set({ session: { 'late.0': Buffer.from([1]) } });
    await store.saveCreds();
    await new Promise((r) => setTimeout(r, 50));
    await store.flush();
    expect(await db.sessionAuth.count({ where: { sessionId } })).toBe(0);
  });

  it('reports registered only for saved credentials of a linked, registered account', async () => {
    const fresh = await loadAuthState(db, sessionId);
    expect(fresh.registered).toBe(false);

    fresh.state.creds.me = { id: '15550001111:1@s.whatsapp.net', name: 'x' };
    fresh.state.creds.registered = true;
    await fresh.saveCreds();
    await fresh.flush();

    const reloaded = await loadAuthState(db, sessionId);
    expect(reloaded.registered).toBe(true);
    expect(reloaded.state.creds.me).toEqual({ id: '15550001111:1@s.whatsapp.net', name: 'x' });
    // Keys from the saved credentials come back as Buffers, so the Signal identity survives a reload.
    expect(reloaded.state.creds.signedIdentityKey).toEqual(fresh.state.creds.signedIdentityKey);
    expect(Buffer.isBuffer(reloaded.state.creds.signedIdentityKey.private)).toBe(true);
  });

  it('does not report registered for credentials that were never linked', async () => {
    const store = await loadAuthState(db, sessionId);
    store.state.creds.registered = true;
    await store.saveCreds();
    expect(await db.sessionAuth.count({ where: { sessionId, type: 'creds' } })).toBe(1);
    expect((await loadAuthState(db, sessionId)).registered).toBe(false);
  });

  it('flush() returns only after the credential saves are written, and the last save wins', async () => {
    // Credential writes that take a while, the first one longest, as on a busy database; everything
    // else goes straight through.
    const delays = [40, 5];
    const slowCreds = new Proxy(db, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop);
        if (prop !== '$executeRaw' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await new Promise((r) => setTimeout(r, delays.shift() ?? 0));
          return Reflect.apply(value, target, args);
        };
      },
    });
    const store = await loadAuthState(slowCreds, sessionId);
    store.state.creds.me = { id: '15550001111:1@s.whatsapp.net', name: 'first' };
    const saves = [store.saveCreds()];
    await new Promise((r) => setTimeout(r, 5));
    store.state.creds.me = { id: '15550001111:1@s.whatsapp.net', name: 'second' };
    saves.push(store.saveCreds());
    await store.flush();
    expect((await loadAuthState(db, sessionId)).state.creds.me?.name).toBe('second');
    // The slower first save did not land after the second one.
    await Promise.all(saves);
    expect((await loadAuthState(db, sessionId)).state.creds.me?.name).toBe('second');
  });

  it('reports registered for a session linked by QR, whose credentials carry the account but registered=false', async () => {
    const store = await loadAuthState(db, sessionId);
    store.state.creds.me = { id: '15550001111:1@s.whatsapp.net', name: 'qr' };
    expect(store.state.creds.registered).toBe(false);
    await store.saveCreds();
    await store.flush();
    expect((await loadAuthState(db, sessionId)).registered).toBe(true);
  });

  it('does not take a key set while a read of it was running for missing', async () => {
    const store = await loadAuthState(db, sessionId);
    const reading = store.state.keys.get('session', ['a.0']);
    void store.state.keys.set({ session: { 'a.0': Buffer.from([9]) } });
    await reading;
    await store.flush();
    expect(await store.state.keys.get('session', ['a.0'])).toEqual({ 'a.0': Buffer.from([9]) });
  });
});
