import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageStore } from '../src/runtime/message-store.ts';
import type { ReceivedMessage } from '../src/runtime/ports/incoming.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';

const jid = (n: string) => `${n}@s.whatsapp.net`;
const KIM = jid('15557770002');
const LEE = jid('15557770003');
const DAY_MS = 24 * 3600 * 1000;

describe.each(dbKinds)('retention and erasure of stored messages (%s)', (kind) => {
  let app: TestApp;
  let seq = 0;

  const call = (key: string, method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  const found = async (key: string, sessionId: string, q: string) =>
    ((await call(key, 'GET', `/v1/sessions/${sessionId}/search?q=${encodeURIComponent(q)}`)).body.items as Json[]).map((i) => i.text);

  /** A message handed to the store as a link hands it over; returns its network id. */
  const receive = async (sessionId: string, chatId: string, text: string, at: Date, extra: Partial<ReceivedMessage> = {}) => {
    const messageId = `3EB1${(++seq).toString(16).padStart(16, '0').toUpperCase()}`;
    await app.deps.received.receive(sessionId, {
      chatId,
      chatLid: null,
      from: chatId,
      fromLid: null,
      fromMe: false,
      type: 'text',
      content: text,
      text,
      pushName: 'Kim',
      messageTimestamp: Math.floor(at.getTime() / 1000),
      messageId,
      key: { remoteJid: chatId, id: messageId, fromMe: false },
      ...extra,
    } as ReceivedMessage);
    return messageId;
  };
  /** An outgoing record this API sent (SENT), with its stored message as the SENT mark writes it. */
  const sent = async (accountId: string, sessionId: string, to: string, content: string, at: Date) => {
    const waMessageId = `3EB2${(++seq).toString(16).padStart(16, '0').toUpperCase()}`;
    const record = await app.db.outgoingMessage.create({
      data: { accountId, sessionId, toNumber: to, remoteJid: to, content, status: 'SENT', waMessageId, sentAt: at, createdAt: at },
    });
    await app.deps.outgoing.storeSent([record.id]);
    return record;
  };
  const account = async () => {
    const a = await app.newAccount();
    const sessionId = (await app.db.session.create({ data: { accountId: a.id, sessionName: 'main', phone: '15557770001' } })).id;
    return { ...a, sessionId };
  };
  const ago = (days: number) => new Date(Date.now() - days * DAY_MS);

  beforeAll(async () => {
    app = await startTestApp(kind);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it('is an account setting, in REST and GraphQL, checked', async () => {
    const a = await account();
    const before = await call(a.apiKey, 'GET', '/v1/accounts/me/settings');
    expect(before.body.settings).toMatchObject({ messageRetentionDays: null, messageStore: 'all', sendIntervalMs: null });
    const changed = await call(a.apiKey, 'PATCH', '/v1/accounts/me/settings', { messageRetentionDays: 30, messageStore: 'specOnly' });
    expect(changed.status).toBe(200);
    expect(changed.body.settings).toMatchObject({ messageRetentionDays: 30, messageStore: 'specOnly', warmup: null });
    const viaGraph = await gql(app.baseUrl, a.apiKey, '{ me { messageRetention { messageRetentionDays messageStore } } }');
    expect(viaGraph.data?.me.messageRetention).toEqual({ messageRetentionDays: 30, messageStore: 'specOnly' });
    const back = await gql(
      app.baseUrl,
      a.apiKey,
      'mutation { updateMessageRetention(input: { messageRetentionDays: null, messageStore: all }) { messageRetentionDays messageStore } }',
    );
    expect(back.data?.updateMessageRetention).toEqual({ messageRetentionDays: null, messageStore: 'all' });
    for (const body of [{ messageRetentionDays: 0 }, { messageRetentionDays: 1.5 }, { messageStore: 'none' }]) {
      const refused = await call(a.apiKey, 'PATCH', '/v1/accounts/me/settings', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('deletes stored messages past the retention in batches, keeping recent ones, outgoing records and other accounts’ messages', async () => {
    const a = await account();
    const b = await account();
    await call(a.apiKey, 'PATCH', '/v1/accounts/me/settings', { messageRetentionDays: 30 });
    await receive(a.sessionId, KIM, 'an old word from kim', ago(40));
    await receive(a.sessionId, KIM, 'a recent word from kim', ago(1));
    await receive(a.sessionId, LEE, 'only old things here', ago(35));
    const oldSent = await sent(a.id, a.sessionId, KIM, 'an old reply', ago(45));
    await receive(b.sessionId, KIM, 'old but kept: no retention', ago(400));
    // A backlog larger than a batch (1,000 rows per statement).
    const backlog = Array.from({ length: 2_100 }, (_, i) => ({
      sessionId: a.sessionId,
      waMessageId: `OLD${i}`,
      direction: 'in',
      chatId: KIM,
      sender: KIM,
      fromMe: false,
      kind: 'text',
      text: `backlog ${i}`,
      key: '{}',
      messageTimestamp: ago(31 + (i % 50)),
    }));
    await app.db.message.createMany({ data: backlog });
    expect(await app.db.message.count({ where: { sessionId: a.sessionId } })).toBe(2_104);

    const deleted = await app.deps.messageRetention.purge();
    expect(deleted).toBe(2_103);
    expect((await app.db.message.findMany({ where: { sessionId: a.sessionId } })).map((m) => m.text)).toEqual(['a recent word from kim']);
    // The outgoing record the spec's routes read stays, without its stored row.
    expect(await app.db.outgoingMessage.findUnique({ where: { id: oldSent.id } })).toMatchObject({
      status: 'SENT',
      content: 'an old reply',
    });
    const record = await call(a.apiKey, 'GET', `/v1/sessions/${a.sessionId}/messages/${oldSent.id}`);
    expect(record.status).toBe(200);
    // A chat with nothing left goes; one with a recent message stays.
    expect((await app.db.chat.findMany({ where: { sessionId: a.sessionId } })).map((c) => c.chatId)).toEqual([KIM]);
    // The search index follows.
    expect(await found(a.apiKey, a.sessionId, 'old')).toEqual([]);
    expect(await found(a.apiKey, a.sessionId, 'backlog')).toEqual([]);
    expect(await found(a.apiKey, a.sessionId, 'kim')).toEqual(['a recent word from kim']);
    // Another account, without a retention, keeps everything.
    expect(await found(b.apiKey, b.sessionId, 'kept')).toEqual(['old but kept: no retention']);
  });

  it('stores nothing beyond the spec’s routes in specOnly mode: no message, no chat; the file record and outgoing record stay', async () => {
    const a = await account();
    await call(a.apiKey, 'PATCH', '/v1/accounts/me/settings', { messageStore: 'specOnly' });
    const text = await receive(a.sessionId, KIM, 'not to be stored', new Date());
    const image = await receive(a.sessionId, KIM, 'a caption', new Date(), {
      type: 'image',
      media: {
        mediaType: 'image',
        mediaKey: Buffer.alloc(32).toString('base64'),
        directPath: '/x',
        mimetype: 'image/jpeg',
        size: 3,
        fileName: null,
      },
    });
    const record = await sent(a.id, a.sessionId, KIM, 'a reply, not stored either', new Date());
    expect(await app.db.message.count({ where: { sessionId: a.sessionId } })).toBe(0);
    expect(await app.db.chat.count({ where: { sessionId: a.sessionId } })).toBe(0);
    expect(
      await app.db.incomingMedia.findUnique({ where: { sessionId_messageId: { sessionId: a.sessionId, messageId: image } } }),
    ).not.toBeNull();
    expect(await app.db.outgoingMessage.findUnique({ where: { id: record.id } })).toMatchObject({ status: 'SENT' });
    expect(text).toBeTruthy();
    // Nor does the phone's history sync.
    const history = (app.deps.received as unknown as MessageStore).storeHistory(a.sessionId, [
      {
        chatId: LEE,
        chatLid: null,
        from: LEE,
        fromLid: null,
        fromMe: false,
        type: 'text',
        content: 'from the past',
        text: 'from the past',
        pushName: 'Lee',
        messageTimestamp: Math.floor(ago(3).getTime() / 1000),
        messageId: 'HISTORY1',
        key: { remoteJid: LEE, id: 'HISTORY1', fromMe: false },
      },
    ]);
    expect(await history).toBe(0);
    // Back to all: the next message is stored.
    await call(a.apiKey, 'PATCH', '/v1/accounts/me/settings', { messageStore: 'all' });
    await receive(a.sessionId, KIM, 'stored again', new Date());
    expect((await app.db.message.findMany({ where: { sessionId: a.sessionId } })).map((m) => m.text)).toEqual(['stored again']);
  });

  it("erases one chat's messages through REST and GraphQL: rows, chat and search entries go, outgoing records stay", async () => {
    const a = await account();
    const other = await account();
    await receive(a.sessionId, KIM, 'secret plans with kim', ago(2));
    const reply = await sent(a.id, a.sessionId, KIM, 'secret answer', ago(1));
    await receive(a.sessionId, LEE, 'secret lee keeps', ago(1));
    expect(await found(a.apiKey, a.sessionId, 'secret')).toHaveLength(3);

    const path = `/v1/sessions/${a.sessionId}/chats/${encodeURIComponent(KIM)}/messages`;
    expect((await call(other.apiKey, 'DELETE', path)).status).toBe(404);
    const erased = await call(a.apiKey, 'DELETE', path);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ ok: true, erased: 2 });
    expect(await app.db.message.count({ where: { sessionId: a.sessionId, chatId: KIM } })).toBe(0);
    expect(await app.db.chat.findUnique({ where: { sessionId_chatId: { sessionId: a.sessionId, chatId: KIM } } })).toBeNull();
    expect(await found(a.apiKey, a.sessionId, 'secret')).toEqual(['secret lee keeps']);
    expect(await app.db.outgoingMessage.findUnique({ where: { id: reply.id } })).toMatchObject({ status: 'SENT' });
    // Erased already: nothing of it is left.
    const again = await call(a.apiKey, 'DELETE', path);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');

    const viaGraph = await gql(app.baseUrl, a.apiKey, 'mutation($s: ID!, $c: String!) { eraseChat(sessionId: $s, chatId: $c) }', {
      s: a.sessionId,
      c: LEE,
    });
    expect(viaGraph.data?.eraseChat).toBe(1);
    expect(await found(a.apiKey, a.sessionId, 'secret')).toEqual([]);
  });

  it('deleting a session deletes its messages, chats and search entries', async () => {
    const a = await account();
    const keep = await account();
    await receive(a.sessionId, KIM, 'gone with the session', ago(1));
    await receive(keep.sessionId, KIM, 'gone? no, kept', ago(1));
    expect(await app.db.message.count({ where: { sessionId: a.sessionId } })).toBe(1);
    const deleted = await call(a.apiKey, 'DELETE', `/v1/sessions/${a.sessionId}`);
    expect(deleted.status).toBe(200);
    expect(await app.db.message.count({ where: { sessionId: a.sessionId } })).toBe(0);
    expect(await app.db.chat.count({ where: { sessionId: a.sessionId } })).toBe(0);
    // The search index holds no entry of it: every entry left belongs to a stored message.
    if (kind === 'sqlite') {
      const orphans = await app.db.$queryRaw<Array<{ n: number | bigint }>>`SELECT COUNT(*) AS n FROM "MessageSearchKey" k
        LEFT JOIN "Message" m ON m."id" = k."messageId" WHERE m."id" IS NULL`;
      expect(Number(orphans[0]?.n)).toBe(0);
      const entries = await app.db.$queryRaw<
        Array<{ n: number | bigint }>
      >`SELECT COUNT(*) AS n FROM "MessageSearch" WHERE "MessageSearch" MATCH '"gone"*'`;
      expect(Number(entries[0]?.n)).toBe(1);
    }
    expect(await found(keep.apiKey, keep.sessionId, 'gone')).toEqual(['gone? no, kept']);
  });
});
