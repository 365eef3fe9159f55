import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from '@libsql/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import type { DbKind } from './helpers/app.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const ME = '15558880001';
const BOB = '15558880002';

/**
 * Holds every write to the webhook outbox from outside the service, as a slow or locked database
 * would: on PostgreSQL a table lock, on SQLite the database's one write lock (kept well inside the
 * service's 5 s busy timeout). `blocked` resolves once the service is seen waiting for it (PostgreSQL
 * shows the waiting INSERT; SQLite cannot, so there it waits a moment, well beyond the few
 * milliseconds the message takes to reach the write). The service runs as a process of its own: on
 * SQLite a statement waiting for the lock holds its whole thread (libsql waits in place).
 */
interface Hold {
  blocked: () => Promise<void>;
  release: () => Promise<void>;
}

const holdOutbox = async (kind: DbKind, url: string): Promise<Hold> => {
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE "WebhookDelivery" IN EXCLUSIVE MODE');
    // Activity is read on a connection of its own: inside a transaction it is one snapshot.
    const watch = new pg.Client({ connectionString: url });
    await watch.connect();
    return {
      blocked: async () => {
        await waitUntil(
          async () =>
            (
              await watch.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO "WebhookDelivery"%'`,
              )
            ).rows[0].n as number,
          (n) => n > 0,
        );
      },
      release: async () => {
        await client.query('COMMIT');
        await client.end();
        await watch.end();
      },
    };
  }
  const client = createClient({ url, timeout: 5_000 });
  const tx = await client.transaction('write');
  // The write lock is taken by the transaction's first write.
  await tx.execute(`UPDATE "WebhookDelivery" SET "type" = "type" WHERE 0`);
  return {
    // The service cannot be asked: waiting for the lock, its main thread answers nothing.
    blocked: () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    release: async () => {
      await tx.rollback();
      client.close();
    },
  };
};

/**
 * Makes the inserts into `table` whose `column` is LIKE `pattern` fail, as a database refusing the
 * write would, until undone.
 */
const refuseInserts = async (
  kind: DbKind,
  url: string,
  refuse: { table: 'IncomingMedia' | 'WebhookDelivery'; column: string; pattern: string },
): Promise<() => Promise<void>> => {
  const { table, column, pattern } = refuse;
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `CREATE FUNCTION refuse_insert() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql`,
    );
    await client.query(
      `CREATE TRIGGER refuse_insert BEFORE INSERT ON "${table}" FOR EACH ROW WHEN (NEW."${column}" LIKE '${pattern}') EXECUTE FUNCTION refuse_insert()`,
    );
    return async () => {
      await client.query(`DROP TRIGGER refuse_insert ON "${table}"`);
      await client.query('DROP FUNCTION refuse_insert()');
      await client.end();
    };
  }
  const client = createClient({ url });
  await client.execute(
    `CREATE TRIGGER refuse_insert BEFORE INSERT ON "${table}" WHEN NEW."${column}" LIKE '${pattern}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
  );
  return async () => {
    await client.execute('DROP TRIGGER refuse_insert');
    client.close();
  };
};

const contentOf = (data: string) => (JSON.parse(data) as { content?: string }).content;

describe.each(dbKinds)('a received message is stored before its delivery receipt (%s)', (kind) => {
  const KEY = `wak_${randomUUID()}`;
  let sandbox: Sandbox;
  let database: TestDatabase;
  let db: Db;
  let receiver: Receiver;
  let service: ServiceProcess | undefined;
  let sessionId = '';
  const env = () => ({
    DATABASE_URL: database.url,
    WA_SANDBOX_URL: sandbox.controlUrl,
    BOOTSTRAP_EMAIL: 'crash@example.com',
    BOOTSTRAP_API_KEY: KEY,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_MS: '100',
  });
  const call = (method: string, path: string, body?: unknown) => http(service?.baseUrl ?? '', method, path, { key: KEY, body });
  const connected = () =>
    waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
      60_000,
    );

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    db = createPrisma(database.url);
    receiver = await startReceiver();
    sandbox.control.addPhone(ME);
    sandbox.control.addPhone(BOB, 'Bob');
    service = await spawnService(env());
    sessionId = await linkThroughQr(service.baseUrl, KEY, sandbox, ME, 'crash', 60_000);
    const warm = await sandbox.control.sendText(BOB, ME, 'warm up');
    await waitUntil(
      async () => sandbox.control.delivery(BOB, warm.id)?.receipted.length,
      (n) => n === 1,
    );
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.received'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 180_000);
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await db?.$disconnect();
    await sandbox?.close();
    await receiver?.close();
    await database?.drop();
  });

  const incoming = async () =>
    (await call('GET', `/v1/sessions/${sessionId}/incoming?limit=100&consume=false`)).body.items as Array<{ content: string }>;
  const stored = async (content: string) =>
    (await db.webhookDelivery.findMany({ where: { type: 'message.received' } })).filter((r) => contentOf(r.data) === content);

  it('the phone gets no delivery receipt while the write waits, and gets it once the write committed; stored once', async () => {
    const hold = await holdOutbox(kind, database.url);
    let id = '';
    let released = '';
    try {
      ({ id } = await sandbox.control.sendText(BOB, ME, 'held back'));
      await hold.blocked();
      expect(sandbox.control.delivery(BOB, id)).toMatchObject({ receipted: [], waiting: [expect.any(Number)] });
      released = new Date().toISOString();
    } finally {
      await hold.release();
    }
    const view = await waitUntil(
      async () => sandbox.control.delivery(BOB, id),
      (d) => (d?.receipted.length ?? 0) === 1,
    );
    expect(view?.waiting).toEqual([]);
    expect((view?.receipted[0]?.at ?? '') >= released).toBe(true);
    // The receipt went after the commit: the row is there for any reader.
    expect(await stored('held back')).toHaveLength(1);

    // Baileys handles a link's messages one at a time: once the next one is in, the first one's
    // messages.upsert has passed too, and was not stored a second time.
    await sandbox.control.sendText(BOB, ME, 'after it');
    await waitUntil(incoming, (items) => items.some((m) => m.content === 'after it'));
    expect((await incoming()).filter((m) => m.content === 'held back')).toHaveLength(1);
    expect(await stored('held back')).toHaveLength(1);
    await waitUntil(
      async () => receiver.received.filter((r) => r.payload.data.content === 'held back').length,
      (n) => n === 1,
    );
  });

  it('while a message waits for its write, the link decrypts the next ones; they keep their order, each receipted after its write', async () => {
    const texts = ['one of three', 'two of three', 'three of three'];
    const hold = await holdOutbox(kind, database.url);
    const ids: string[] = [];
    let released = '';
    try {
      for (const text of texts) ids.push((await sandbox.control.sendText(BOB, ME, text)).id);
      ids.push((await sandbox.control.react(BOB, ME, ids[1] ?? '', '👍')).id);
      await hold.blocked();
      if (kind === 'postgres') {
        // The first one's webhook rows wait for the lock; the messages after it were decrypted and stored
        // meanwhile, the reaction applied to the second. (On SQLite the held lock stops every write.)
        await waitUntil(
          async () => db.message.count({ where: { sessionId, waMessageId: { in: ids.slice(0, 3) } } }),
          (n) => n === 3,
        );
        await waitUntil(
          async () => db.messageReaction.count({ where: { message: { sessionId, waMessageId: ids[1] ?? '' }, emoji: '👍' } }),
          (n) => n === 1,
        );
      }
      for (const id of ids) expect(sandbox.control.delivery(BOB, id)?.receipted).toEqual([]);
      released = new Date().toISOString();
    } finally {
      await hold.release();
    }
    for (const id of ids) {
      const view = await waitUntil(
        async () => sandbox.control.delivery(BOB, id),
        (d) => (d?.receipted.length ?? 0) === 1,
      );
      expect((view?.receipted[0]?.at ?? '') >= released).toBe(true);
    }
    await waitUntil(incoming, (items) => items.some((m) => m.content === texts[2]));
    expect((await incoming()).map((m) => m.content).filter((c) => texts.includes(c))).toEqual(texts);
    for (const text of texts) expect(await stored(text)).toHaveLength(1);
    const reacted = await db.messageReaction.findMany({ where: { message: { sessionId, waMessageId: ids[1] ?? '' } } });
    expect(reacted.map((r) => r.emoji)).toEqual(['👍']);
  });

  it('the message is neither receipted nor lost: the network delivers it again and it reaches the webhook', {
    timeout: 180_000,
  }, async () => {
    const hold = await holdOutbox(kind, database.url);
    let id = '';
    try {
      ({ id } = await sandbox.control.sendText(BOB, ME, 'survives the crash'));
      await hold.blocked();
      expect(sandbox.control.delivery(BOB, id)?.receipted).toEqual([]);
      await service?.stop('SIGKILL');
    } finally {
      await hold.release();
    }
    // Nothing receipted: the network still holds the message for the device. (On PostgreSQL the INSERT
    // the killed process left waiting still commits once the lock goes; then the message is both
    // stored and delivered again: at least once.)
    expect(sandbox.control.delivery(BOB, id)).toMatchObject({ receipted: [], waiting: [expect.any(Number)] });

    service = await spawnService(env());
    await connected();
    const view = await waitUntil(
      async () => sandbox.control.delivery(BOB, id),
      (d) => (d?.receipted.length ?? 0) === 1,
      60_000,
    );
    expect(view?.waiting).toEqual([]);
    await waitUntil(
      async () => receiver.received.filter((r) => r.payload.data.content === 'survives the crash'),
      (found) => found.length >= 1,
      30_000,
    );
    const got = receiver.received.filter((r) => r.payload.data.content === 'survives the crash');
    expect(got[0]?.verified).toBe(true);
    expect(got[0]?.payload.data).toMatchObject({ sessionId, from: `${BOB}@s.whatsapp.net`, fromMe: false, type: 'text' });
    // Stored before the crash and delivered again (at least once): every copy names the same network
    // message, so the receiver can tell it is one.
    expect(got.map((r) => r.payload.data.waMessageId)).toEqual(got.map(() => id));
    expect((await incoming()).filter((m) => m.content === 'survives the crash')).toHaveLength(1);
    expect((await stored('survives the crash')).length).toBeGreaterThanOrEqual(1);
  });

  it.each([
    {
      what: 'its file record',
      content: 'refused file record',
      refuse: { table: 'IncomingMedia', column: 'mimetype', pattern: 'image/png' },
    },
    {
      what: 'its webhook rows',
      content: 'refused webhook rows',
      refuse: { table: 'WebhookDelivery', column: 'data', pattern: '%refused webhook rows%' },
    },
  ] as const)(
    'a received file whose write of $what fails is not receipted: it is delivered again and stored once, with its media',
    {
      timeout: 120_000,
    },
    async ({ content, refuse }) => {
      const allow = await refuseInserts(kind, database.url, refuse);
      let id = '';
      const data = randomBytes(20_000);
      try {
        ({ id } = await sandbox.control.sendMedia(BOB, ME, { type: 'image', data, mimetype: 'image/png', caption: content }));
        // A link's messages are handled one at a time: once the next one is in, the file's turn is over.
        await sandbox.control.sendText(BOB, ME, `the next one (${refuse.table})`);
        await waitUntil(incoming, (items) => items.some((m) => m.content === `the next one (${refuse.table})`), 30_000);
        expect(sandbox.control.delivery(BOB, id)).toMatchObject({ receipted: [], waiting: [expect.any(Number)] });
        expect((await incoming()).filter((m) => m.content === content)).toEqual([]);
        expect(await stored(content)).toEqual([]);
      } finally {
        await allow();
      }

      // The network delivers what was not receipted when the link logs in again.
      sandbox.control.dropDevice(ME);
      const view = await waitUntil(
        async () => sandbox.control.delivery(BOB, id),
        (d) => (d?.receipted.length ?? 0) === 1,
        60_000,
      );
      expect(view?.waiting).toEqual([]);
      const items = (await incoming()).filter((m) => m.content === content);
      expect(items).toHaveLength(1);
      const media = (items[0] as { media?: { url: string; size: number } }).media;
      expect(media).toMatchObject({ size: data.length, url: `/v1/sessions/${sessionId}/incoming/${id}/media` });
      expect(await db.incomingMedia.count({ where: { sessionId, messageId: id } })).toBe(1);
      expect(await stored(content)).toHaveLength(1);
      const file = await fetch(`${service?.baseUrl}${media?.url}`, { headers: { 'x-api-key': KEY } });
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer()).equals(data)).toBe(true);
    },
  );
});
