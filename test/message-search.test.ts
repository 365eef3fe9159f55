import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedMessage } from '../src/runtime/ports/incoming.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';

const jid = (n: string) => `${n}@s.whatsapp.net`;
const KIM = jid('15557770002');
const LEE = jid('15557770003');
const GROUP = '120363000000000001@g.us';

describe.each(dbKinds)('searching stored messages (%s)', (kind) => {
  let app: TestApp;
  let key: string;
  let sessionId: string;
  let otherKey: string;
  let otherSession: string;
  let ownSecond: string;
  let seq = 0;

  const call = (path: string, k = key) => http(app.baseUrl, 'GET', path, { key: k });
  const search = (params: Record<string, string>, sid = sessionId, k = key) =>
    call(`/v1/sessions/${sid}/search?${new URLSearchParams(params)}`, k);
  const texts = (body: Json): string[] => (body.items as Json[]).map((i) => i.text);

  /** A message handed to the store as a link hands it over; returns its network id. */
  const receive = async (sid: string, chatId: string, text: string, at: Date, extra: Partial<ReceivedMessage> = {}) => {
    const messageId = `3EB0${(++seq).toString(16).padStart(16, '0').toUpperCase()}`;
    await app.deps.received.receive(sid, {
      chatId,
      chatLid: null,
      from: chatId.endsWith('@g.us') ? LEE : chatId,
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
  const day = (d: number) => new Date(Date.UTC(2026, 10, d, 12));
  const newSession = async (accountId: string, name: string) =>
    (await app.db.session.create({ data: { accountId, sessionName: name } })).id;

  beforeAll(async () => {
    app = await startTestApp(kind);
    const account = await app.newAccount();
    key = account.apiKey;
    sessionId = await newSession(account.id, 'main');
    ownSecond = await newSession(account.id, 'second');
    const other = await app.newAccount();
    otherKey = other.apiKey;
    otherSession = await newSession(other.id, 'other');
    await receive(sessionId, KIM, 'Hello there, see you at the harbour', day(1));
    await receive(sessionId, KIM, 'hello again: lunch tomorrow?', day(2));
    await receive(sessionId, GROUP, 'HELLO group, the harbour trip is on', day(3));
    await receive(sessionId, LEE, 'Grüße aus München, ça va? 你好世界', day(4));
    await receive(sessionId, LEE, 'nothing to find here', day(5));
    await receive(ownSecond, KIM, 'hello from my second number', day(2));
    await receive(otherSession, KIM, 'hello harbour from another tenant', day(2));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it('finds messages by a word and by the start of one, newest first, in this session only', async () => {
    const word = await search({ q: 'hello' });
    expect(word.status).toBe(200);
    expect(texts(word.body)).toEqual([
      'HELLO group, the harbour trip is on',
      'hello again: lunch tomorrow?',
      'Hello there, see you at the harbour',
    ]);
    expect(word.body).toMatchObject({ ok: true, total: 3, limit: 50, nextCursor: null });
    expect(word.body.items[0]).toMatchObject({
      chatId: GROUP,
      direction: 'in',
      fromMe: false,
      sender: LEE,
      kind: 'text',
      editedAt: null,
      timestamp: day(3).toISOString(),
    });
    // "hel" is the start of "hello"; every word must match; case does not count.
    expect(texts((await search({ q: 'hel' })).body)).toHaveLength(3);
    expect(texts((await search({ q: 'HEL harb' })).body)).toEqual([
      'HELLO group, the harbour trip is on',
      'Hello there, see you at the harbour',
    ]);
    // Words of other scripts and accents.
    expect(texts((await search({ q: 'münch' })).body)).toEqual(['Grüße aus München, ça va? 你好世界']);
    expect(texts((await search({ q: '你好' })).body)).toEqual(['Grüße aus München, ça va? 你好世界']);
    // The other session of the same account, and another tenant's, are not searched.
    expect(texts((await search({ q: 'second' })).body)).toEqual([]);
    expect(texts((await search({ q: 'tenant' })).body)).toEqual([]);
    expect(texts((await search({ q: 'second' }, ownSecond)).body)).toEqual(['hello from my second number']);
    // Another tenant's session is a 404, as any of its routes.
    const foreign = await search({ q: 'hello' }, otherSession);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('NOT_FOUND');
    expect((await search({ q: 'hello' }, sessionId, otherKey)).status).toBe(404);
  });

  it('filters by chat and by time (from inclusive, to exclusive)', async () => {
    expect(texts((await search({ q: 'hello', chatId: KIM })).body)).toEqual([
      'hello again: lunch tomorrow?',
      'Hello there, see you at the harbour',
    ]);
    expect(texts((await search({ q: 'hello', from: day(2).toISOString(), to: day(3).toISOString() })).body)).toEqual([
      'hello again: lunch tomorrow?',
    ]);
    expect(texts((await search({ q: 'hello', chatId: GROUP, to: day(3).toISOString() })).body)).toEqual([]);
    const bad = await search({ q: 'hello', from: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ path: 'from', message: 'must be an ISO 8601 date-time' }]);
  });

  it('pages with cursors; a made-up cursor or another session’s is a 400', async () => {
    const first = await search({ q: 'hello', limit: '2' });
    expect(texts(first.body)).toEqual(['HELLO group, the harbour trip is on', 'hello again: lunch tomorrow?']);
    expect(first.body.total).toBe(3);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await search({ q: 'hello', limit: '2', cursor: first.body.nextCursor });
    expect(texts(second.body)).toEqual(['Hello there, see you at the harbour']);
    expect(second.body.nextCursor).toBeNull();

    const ownOther = await search({ q: 'hello', limit: '1' }, ownSecond);
    for (const cursor of ['nonsense', Buffer.from('[1,2,3]').toString('base64url'), ownOther.body.nextCursor ?? 'x', '"']) {
      const refused = await search({ q: 'hello', cursor });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ path: 'cursor', message: 'is not a cursor of this session' }],
      });
    }
    // The same session on its second page is fine with its own cursor.
    const mine = await search({ q: 'hello', limit: '1' });
    expect((await search({ q: 'hello', cursor: mine.body.nextCursor })).status).toBe(200);
  });

  it('finds an edited message by its new text, and a deleted one no more', async () => {
    const id = await receive(sessionId, KIM, 'the meeting is at noon', day(6));
    expect(texts((await search({ q: 'noon' })).body)).toEqual(['the meeting is at noon']);
    await receive(sessionId, KIM, '', day(6), { type: 'edit', content: 'the meeting moved to evening', refersTo: id, messageId: `${id}E` });
    expect(texts((await search({ q: 'noon' })).body)).toEqual([]);
    const edited = await search({ q: 'eve' });
    expect(texts(edited.body)).toEqual(['the meeting moved to evening']);
    expect(edited.body.items[0].editedAt).not.toBeNull();
    await receive(sessionId, KIM, '', day(6), { type: 'revoke', content: '', refersTo: id, messageId: `${id}D` });
    expect((await search({ q: 'evening' })).body).toMatchObject({ items: [], total: 0 });
    expect((await search({ q: 'meeting' })).body.total).toBe(0);
  });

  it('answers odd input with results or a clear 400, never a 500', async () => {
    for (const q of ['"', '*', 'OR', 'hello OR', ':', 'hello:*', "hel'lo", 'NEAR(hello)', '\\', 'a & b | !c', '-hello', '(', 'AND hello']) {
      const answer = await search({ q });
      expect([200, 400], q).toContain(answer.status);
      if (answer.status === 400) expect(answer.body.error.code).toBe('VALIDATION_FAILED');
    }
    // Operators are words like any other: "hello OR" needs both.
    expect(texts((await search({ q: 'hello OR' })).body)).toEqual([]);
    expect(texts((await search({ q: '"hello*' })).body)).toHaveLength(3);
    const nul = await search({ q: 'hel\u0000lo' });
    expect(nul.status).toBe(400);
    expect(nul.body.error.details).toEqual([{ path: 'q', message: 'must not contain a NUL character' }]);
    const nothing = await search({ q: '?!*' });
    expect(nothing.status).toBe(400);
    expect(nothing.body.error.details).toEqual([{ path: 'q', message: 'must contain a letter or a digit' }]);
    expect((await search({})).status).toBe(400);

    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }), async (q) => {
        const answer = await search({ q });
        expect([200, 400]).toContain(answer.status);
      }),
      { numRuns: 60 },
    );
  });

  it('is Session.searchMessages in GraphQL, a connection with totalCount and cursors', async () => {
    const query = `query($id: ID!, $q: String!, $after: String) { session(id: $id) { searchMessages(query: $q, first: 2, after: $after) {
      totalCount edges { cursor node { text chatId direction timestamp } } pageInfo { hasNextPage endCursor } } } }`;
    const first = await gql(app.baseUrl, key, query, { id: sessionId, q: 'hello' });
    expect(first.errors).toBeUndefined();
    const conn = first.data.session.searchMessages;
    expect(conn.totalCount).toBe(3);
    expect(conn.edges.map((e: Json) => e.node.text)).toEqual(['HELLO group, the harbour trip is on', 'hello again: lunch tomorrow?']);
    expect(conn.pageInfo.hasNextPage).toBe(true);
    const next = await gql(app.baseUrl, key, query, { id: sessionId, q: 'hello', after: conn.pageInfo.endCursor });
    expect(next.data.session.searchMessages.edges.map((e: Json) => e.node.text)).toEqual(['Hello there, see you at the harbour']);
    const forged = await gql(app.baseUrl, key, query, { id: sessionId, q: 'hello', after: 'forged' });
    expect(forged.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });
});
