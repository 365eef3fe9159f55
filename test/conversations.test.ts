import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { jobContext } from '../src/resolvers/context.ts';
import { listChats } from '../src/resolvers/conversations.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Db } from '../src/runtime/ports/db.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';
import { linkSession, waitUntil } from './helpers/sandbox.ts';

const ME = '15557780001';
const KIM = '15557780002';
const LEE = '15557780003';
const ANA = '15557780004';
const BO = '15557780005';
const CY = '15557780006';
const DEE = '15557780007';
const OTHER = '15557780009';

const jid = (n: string) => `${n}@s.whatsapp.net`;

describe.each(dbKinds)('conversations API (%s): chats, a chat’s messages, any stored message', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let app: TestApp;
  let key: string;
  let accountId: string;
  let sessionId: string;
  let otherKey: string;
  let otherSessionId: string;
  const call = (method: string, path: string, body?: unknown, as = key) => http(app.baseUrl, method, path, { key: as, body });
  const S = () => `/v1/sessions/${sessionId}`;
  const stored = (session: string, waMessageId: string) =>
    waitUntil(
      () => app.db.message.findUnique({ where: { sessionId_waMessageId: { sessionId: session, waMessageId } } }),
      (m) => m !== null,
    );
  const sent = async (to: string, body: Json) => {
    const answer = await call('POST', `${S()}/send`, { to, ...body });
    expect(answer.status).toBe(200);
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${answer.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body as Json;
    await stored(sessionId, record.waMessageId);
    return record;
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    app = await startTestApp(
      kind,
      {},
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 } },
      { existing: database },
    );
    const account = await app.newAccount();
    key = account.apiKey;
    accountId = account.id;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    otherKey = (await app.newAccount()).apiKey;
    otherSessionId = await linkSession({ app, sandbox, key: otherKey }, OTHER);
    sandbox.control.addPhone(KIM, 'Kim');
    sandbox.control.addPhone(LEE, 'Lee');
    for (const n of [ANA, BO, CY, DEE]) sandbox.control.addPhone(n, `Phone ${n.slice(-1)}`);
  }, 90_000);
  afterAll(async () => {
    await app?.close();
    await database?.drop();
    await sandbox?.close();
  });

  it('lists chats after messages both ways: latest first, unread counts, last message, kind, saved name before push name', async () => {
    // The account saved Lee under another name: a saved name comes before the push name.
    expect((await call('POST', '/v1/contacts', { jid: jid(LEE), name: 'Lee (work)' })).status).toBeLessThan(300);
    const hi = await sandbox.control.sendText(KIM, ME, 'hi from Kim');
    await stored(sessionId, hi.id);
    for (const text of ['one from Lee', 'two from Lee']) await stored(sessionId, (await sandbox.control.sendText(LEE, ME, text)).id);
    const reply = await sent(KIM, { message: 'hello Kim' });

    const list = await call('GET', `${S()}/chats`);
    expect(list.status).toBe(200);
    expect(list.body.nextCursor).toBeNull();
    const chats = list.body.chats as Json[];
    expect(chats.map((c) => c.id)).toEqual([jid(KIM), jid(LEE)]);
    expect(chats[0]).toMatchObject({
      sessionId,
      id: jid(KIM),
      lid: sandbox.control.phone(KIM).lid,
      kind: 'person',
      name: 'Kim',
      unreadCount: 0,
      archived: false,
      pinned: false,
      muted: false,
      lastMessage: {
        id: reply.id,
        waMessageId: reply.waMessageId,
        direction: 'out',
        fromMe: true,
        text: 'hello Kim',
        receipts: { messageId: reply.id, status: 'SENT', recipients: [] },
      },
    });
    expect(chats[1]).toMatchObject({
      id: jid(LEE),
      kind: 'person',
      name: 'Lee (work)',
      unreadCount: 2,
      lastMessage: { direction: 'in', text: 'two from Lee', sender: jid(LEE), receipts: null, quoted: null },
    });
    expect(chats[0]?.lastActivity).toBe(chats[0]?.lastMessage?.timestamp);

    // GraphQL: the same list, and the unread filter with its count.
    const graph = await gql(
      app.baseUrl,
      key,
      `query($id: ID!) { session(id: $id) {
        chats { totalCount edges { node { id kind name unreadCount lastMessage { text direction } } } }
        unread: chats(unread: true) { totalCount edges { node { id } } }
        read: chats(unread: false) { totalCount }
        notArchived: chats(archived: false) { totalCount }
        archived: chats(archived: true) { totalCount }
        people: chats(kind: person) { totalCount }
        groups: chats(kind: group) { totalCount }
      } }`,
      { id: sessionId },
    );
    expect(graph.errors).toBeUndefined();
    const session = (graph.data as Json).session as Json;
    expect(session.chats.totalCount).toBe(2);
    expect(session.chats.edges.map((e: Json) => e.node)).toEqual([
      { id: jid(KIM), kind: 'person', name: 'Kim', unreadCount: 0, lastMessage: { text: 'hello Kim', direction: 'out' } },
      { id: jid(LEE), kind: 'person', name: 'Lee (work)', unreadCount: 2, lastMessage: { text: 'two from Lee', direction: 'in' } },
    ]);
    expect(session.unread).toEqual({ totalCount: 1, edges: [{ node: { id: jid(LEE) } }] });
    expect([session.read, session.notArchived, session.archived, session.people, session.groups]).toEqual([
      { totalCount: 1 },
      { totalCount: 2 },
      { totalCount: 0 },
      { totalCount: 2 },
      { totalCount: 0 },
    ]);
  });

  it('pages through every chat with cursors: no duplicates, no gaps, totalCount on each page', async () => {
    // Three chats in the same second: the order between them is by chat id, which the cursor carries.
    await Promise.all([ANA, BO, CY].map(async (n) => stored(sessionId, (await sandbox.control.sendText(n, ME, `hi from ${n}`)).id)));
    const all = ((await call('GET', `${S()}/chats?limit=200`)).body.chats as Json[]).map((c) => c.id);
    expect(all).toHaveLength(5);
    expect(new Set(all)).toEqual(new Set([KIM, LEE, ANA, BO, CY].map(jid)));

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await call('GET', `${S()}/chats?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...(page.body.chats as Json[]).map((c) => c.id));
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);

    const graphSeen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res = await gql(
        app.baseUrl,
        key,
        `query($id: ID!, $after: String) { session(id: $id) { chats(first: 2, after: $after) {
          totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } } } } }`,
        { id: sessionId, after },
      );
      expect(res.errors).toBeUndefined();
      const chats = ((res.data as Json).session as Json).chats as Json;
      expect(chats.totalCount).toBe(5);
      graphSeen.push(...chats.edges.map((e: Json) => e.node.id));
      expect(chats.edges.at(-1).cursor).toBe(chats.pageInfo.endCursor);
      if (!chats.pageInfo.hasNextPage) break;
      after = chats.pageInfo.endCursor;
    }
    expect(graphSeen).toEqual(all);
    // Each edge's cursor, not only the page's last, continues after its own chat.
    const firstPage = await gql(app.baseUrl, key, `query($id: ID!) { session(id: $id) { chats(first: 3) { edges { cursor } } } }`, {
      id: sessionId,
    });
    const middle = (((firstPage.data as Json).session as Json).chats as Json).edges[0].cursor;
    const fromMiddle = await gql(
      app.baseUrl,
      key,
      `query($id: ID!, $after: String) { session(id: $id) { chats(first: 2, after: $after) { edges { node { id } } } } }`,
      { id: sessionId, after: middle },
    );
    expect((((fromMiddle.data as Json).session as Json).chats as Json).edges.map((e: Json) => e.node.id)).toEqual(all.slice(1, 3));
  });

  it("shows a chat's messages newest first, with the quoted message, reactions, receipts and files", async () => {
    // A received message's network time is in seconds, a sent one's in ms: the file comes in a second after
    // the chat's last send, so the order below is the order things happened.
    const lastSend = await app.db.message.findFirstOrThrow({
      where: { sessionId, chatId: jid(KIM) },
      orderBy: { messageTimestamp: 'desc' },
    });
    await waitUntil(
      async () => Math.floor(Date.now() / 1000),
      (second) => second > Math.floor(lastSend.messageTimestamp.getTime() / 1000),
    );
    const image = await sandbox.control.sendMedia(KIM, ME, {
      type: 'image',
      data: Buffer.from('pixels'),
      mimetype: 'image/jpeg',
      caption: 'look',
    });
    await stored(sessionId, image.id);
    const question = await sandbox.control.sendText(KIM, ME, 'are you there?');
    await stored(sessionId, question.id);
    const answer = await sent(KIM, { message: 'yes, here', quotedMessageId: question.id });
    const reaction = await sandbox.control.react(KIM, ME, answer.waMessageId, '👍');
    await waitUntil(
      () => app.db.messageReaction.count({ where: { messageId: answer.id } }),
      (n) => n === 1,
    );
    expect(reaction.id).toEqual(expect.any(String));
    sandbox.control.read(KIM, { ids: [answer.waMessageId] });
    await waitUntil(
      () => call('GET', `${S()}/messages/${answer.id}`),
      (r) => r.body.readAt !== null && r.body.readAt !== undefined,
    );

    const page = await call('GET', `${S()}/chats/${KIM}/messages?limit=3`);
    expect(page.status).toBe(200);
    const [newest, second, third] = page.body.messages as Json[];
    expect(newest).toMatchObject({
      id: answer.id,
      direction: 'out',
      text: 'yes, here',
      quotedId: question.id,
      quoted: { waMessageId: question.id, direction: 'in', text: 'are you there?', quoted: null },
      reactions: [{ reactor: jid(KIM), reactorLid: sandbox.control.phone(KIM).lid, emoji: '👍', reactedAt: expect.any(String) }],
      receipts: { messageId: answer.id, status: 'SENT', readAt: expect.any(String), deliveredAt: expect.any(String) },
    });
    expect(second).toMatchObject({ waMessageId: question.id, direction: 'in', text: 'are you there?' });
    expect(third).toMatchObject({
      waMessageId: image.id,
      direction: 'in',
      kind: 'image',
      text: 'look',
      media: { mimetype: 'image/jpeg', size: 6, fileName: null, url: `/v1/sessions/${sessionId}/incoming/${image.id}/media` },
    });
    const file = await fetch(`${app.baseUrl}${third?.media.url}`, { headers: { 'x-api-key': key } });
    expect(Buffer.from(await file.arrayBuffer()).toString()).toBe('pixels');
    // The rest of the chat on the next page, older than the first.
    const next = await call('GET', `${S()}/chats/${jid(KIM)}/messages?limit=50&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(next.status).toBe(200);
    expect((next.body.messages as Json[]).map((m) => m.text)).toEqual(['hello Kim', 'hi from Kim']);
    expect(next.body.nextCursor).toBeNull();
    // Dates: only what is older than the question.
    const before = await call('GET', `${S()}/chats/${KIM}/messages?before=${encodeURIComponent(third?.timestamp)}`);
    expect((before.body.messages as Json[]).every((m) => m.timestamp < (third?.timestamp as string))).toBe(true);

    // Any stored message, in or out, by our id or the network's.
    const byOurs = await call('GET', `${S()}/stored-messages/${answer.id}`);
    expect(byOurs.status).toBe(200);
    expect(byOurs.body).toEqual(newest);
    const byNetwork = await call('GET', `${S()}/stored-messages/${question.id}`);
    expect(byNetwork.body).toMatchObject({ waMessageId: question.id, text: 'are you there?' });

    // GraphQL: the chat's messages and one message.
    const graph = await gql(
      app.baseUrl,
      key,
      `query($id: ID!, $chat: String!, $msg: String!) { session(id: $id) {
        chat(id: $chat) { id lastMessage { waMessageId } messages(first: 2) { totalCount edges { node { waMessageId text quoted { text } reactions { emoji }
          receipts { status readAt } media { mimetype url } } } } }
        message(id: $msg) { id direction quoted { waMessageId } }
      } }`,
      { id: sessionId, chat: KIM, msg: answer.waMessageId },
    );
    expect(graph.errors).toBeUndefined();
    const session = (graph.data as Json).session as Json;
    expect(session.chat.messages.edges.map((e: Json) => e.node)).toEqual([
      {
        waMessageId: answer.waMessageId,
        text: 'yes, here',
        quoted: { text: 'are you there?' },
        reactions: [{ emoji: '👍' }],
        receipts: { status: 'SENT', readAt: expect.any(String) },
        media: null,
      },
      { waMessageId: question.id, text: 'are you there?', quoted: null, reactions: [], receipts: null, media: null },
    ]);
    expect(session.message).toEqual({ id: answer.id, direction: 'out', quoted: { waMessageId: question.id } });
    // The chat's latest message, read only when a query asks for it, is the page's first.
    expect(session.chat.lastMessage).toEqual({ waMessageId: answer.waMessageId });
    // The count is of the whole chat, not of the page.
    const all = (await call('GET', `${S()}/chats/${KIM}/messages?limit=200`)).body.messages as Json[];
    expect(all.length).toBeGreaterThan(2);
    expect(session.chat.messages.totalCount).toBe(all.length);
    // since and until count only the messages between them
    const [latest] = all;
    const earliest = all.at(-1);
    const between = await gql(
      app.baseUrl,
      key,
      `query($id: ID!, $chat: String!, $since: DateTime, $until: DateTime) { session(id: $id) {
        chat(id: $chat) { before: messages(until: $until) { totalCount } after: messages(since: $since) { totalCount } } } }`,
      { id: sessionId, chat: KIM, since: earliest.timestamp, until: latest.timestamp },
    );
    expect(between.errors).toBeUndefined();
    const counted = ((between.data as Json).session as Json).chat as Json;
    const older = all.filter((m: Json) => m.timestamp < latest.timestamp).length;
    const newer = all.filter((m: Json) => m.timestamp > earliest.timestamp).length;
    expect(older).toBeGreaterThan(0);
    expect(counted).toEqual({ before: { totalCount: older }, after: { totalCount: newer } });
  });

  it('marking a chat read clears its unread count and keeps when', async () => {
    expect((await call('PATCH', `${S()}/settings`, { sendReadReceipts: true })).status).toBe(200);
    const lee = async () => ((await call('GET', `${S()}/chats?limit=200`)).body.chats as Json[]).find((c) => c.id === jid(LEE));
    expect((await lee())?.unreadCount).toBe(2);
    const marked = await call('POST', `${S()}/chats/${LEE}/read`);
    expect(marked.status).toBe(200);
    expect(await lee()).toMatchObject({ unreadCount: 0, lastReadAt: expect.any(String) });
    // GraphQL's mark, on another chat.
    const res = await gql(app.baseUrl, key, 'mutation($s: ID!, $c: String!) { markChatRead(sessionId: $s, chatId: $c) { chatId } }', {
      s: sessionId,
      c: ANA,
    });
    expect(res.errors).toBeUndefined();
    const ana = await gql(app.baseUrl, key, 'query($s: ID!, $c: String!) { session(id: $s) { chat(id: $c) { unreadCount lastReadAt } } }', {
      s: sessionId,
      c: ANA,
    });
    expect(((ana.data as Json).session as Json).chat).toEqual({ unreadCount: 0, lastReadAt: expect.any(String) });
  });

  it("refuses a forged cursor, another session's or another list's with 400; another tenant's chats and messages are 404", async () => {
    const first = await call('GET', `${S()}/chats?limit=1`);
    const cursor = first.body.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const [payload, mac] = cursor.split('.');
    const forgedBody = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
    forgedBody.k[0] += 1;
    const forged = `${Buffer.from(JSON.stringify(forgedBody)).toString('base64url')}.${mac}`;
    for (const bad of [forged, 'not-a-cursor', `${payload}.${'A'.repeat(43)}`]) {
      const res = await call('GET', `${S()}/chats?cursor=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        ok: false,
        error: {
          code: 'VALIDATION_FAILED',
          message: 'Invalid cursor',
          details: [{ path: 'cursor', message: 'not a cursor this API gave' }],
        },
      });
    }
    // The same cursor with other filters, or for a chat's messages.
    const otherFilter = await call('GET', `${S()}/chats?unread=false&cursor=${encodeURIComponent(cursor)}`);
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.body.error.code).toBe('VALIDATION_FAILED');
    expect((await call('GET', `${S()}/chats/${KIM}/messages?cursor=${encodeURIComponent(cursor)}`)).status).toBe(400);

    // Another account's session, with chats of its own: its cursor is refused on ours.
    for (const n of [KIM, LEE]) await stored(otherSessionId, (await sandbox.control.sendText(n, OTHER, 'to the other account')).id);
    const theirs = await call('GET', `/v1/sessions/${otherSessionId}/chats?limit=1`, undefined, otherKey);
    expect(theirs.status).toBe(200);
    const foreign = await call('GET', `${S()}/chats?cursor=${encodeURIComponent(theirs.body.nextCursor)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details).toEqual([{ path: 'cursor', message: "a cursor of another session's list" }]);
    const graphForged = await gql(app.baseUrl, key, 'query($s: ID!, $a: String) { session(id: $s) { chats(after: $a) { totalCount } } }', {
      s: sessionId,
      a: forged,
    });
    expect(graphForged.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');

    // The other tenant cannot read ours: the session is not theirs.
    const message = await app.db.message.findFirstOrThrow({ where: { sessionId } });
    for (const path of [`${S()}/chats`, `${S()}/chats/${KIM}/messages`, `${S()}/stored-messages/${message.id}`]) {
      const res = await call('GET', path, undefined, otherKey);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    // Nor, through its own session, a message or chat of ours.
    expect((await call('GET', `/v1/sessions/${otherSessionId}/stored-messages/${message.id}`, undefined, otherKey)).status).toBe(404);
    expect((await call('GET', `/v1/sessions/${otherSessionId}/chats/${ANA}/messages`, undefined, otherKey)).status).toBe(404);
    const graph = await gql(app.baseUrl, otherKey, 'query($s: ID!, $m: String!) { storedMessage(sessionId: $s, id: $m) { id } }', {
      s: sessionId,
      m: message.id,
    });
    expect(graph.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('a chat list page is a fixed number of queries, whatever its size', async () => {
    let operations = 0;
    const counted = app.db.$extends({
      query: {
        $allOperations: ({ args, query }) => {
          operations += 1;
          return query(args);
        },
      },
    }) as unknown as Db;
    const ctx = { ...jobContext(app.deps, accountId), db: counted };
    const count = async (limit: number) => {
      operations = 0;
      const page = await listChats(ctx, sessionId, { limit });
      expect(page.chats).toHaveLength(limit);
      return operations;
    };
    // the session's owner, read once and remembered, is left out of the count
    await count(1);
    const one = await count(1);
    const five = await count(5);
    // the chats, their latest messages (with reactions and receipts), saved names, quoted messages, files
    expect(five).toBe(one);
    expect(five).toBeLessThanOrEqual(5);
  });

  it("the chatUpdates subscription sees a new message's chat move to it", async () => {
    const client = createClient({
      url: `${app.baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { 'x-api-key': key },
    });
    const frames: Json[] = [];
    const messages: Json[] = [];
    const stops = [
      client.subscribe(
        {
          query: 'subscription($s: ID!) { chatUpdates(sessionId: $s) { id unreadCount lastMessage { text } } }',
          variables: { s: sessionId },
        },
        { next: (f) => void frames.push(f.data as Json), error: () => undefined, complete: () => undefined },
      ),
      client.subscribe(
        {
          query:
            'subscription($s: ID!, $c: String) { storedMessageUpdates(sessionId: $s, chatId: $c) { waMessageId text reactions { emoji } } }',
          variables: { s: sessionId, c: jid(BO) },
        },
        { next: (f) => void messages.push(f.data as Json), error: () => undefined, complete: () => undefined },
      ),
    ];
    try {
      // Subscribed once a message sent now is seen: resend until the first frame (the subscription starts asynchronously).
      const first = await sandbox.control.sendText(BO, ME, 'are you subscribed?');
      await stored(sessionId, first.id);
      await new Promise((r) => setTimeout(r, 300));
      const news = await sandbox.control.sendText(BO, ME, 'news from Bo');
      await waitUntil(
        async () => frames.find((f) => (f.chatUpdates as Json).lastMessage?.text === 'news from Bo'),
        (f) => f !== undefined,
      );
      const frame = frames.find((f) => (f.chatUpdates as Json).lastMessage?.text === 'news from Bo') as Json;
      expect(frame.chatUpdates).toMatchObject({ id: jid(BO), lastMessage: { text: 'news from Bo' } });
      expect((frame.chatUpdates as Json).unreadCount).toBeGreaterThanOrEqual(2);
      await sandbox.control.react(BO, ME, news.id, '🎉');
      await waitUntil(
        async () => messages.find((m) => (m.storedMessageUpdates as Json).reactions.length > 0),
        (m) => m !== undefined,
      );
      expect(messages.map((m) => m.storedMessageUpdates)).toContainEqual({
        waMessageId: news.id,
        text: 'news from Bo',
        reactions: [{ emoji: '🎉' }],
      });
    } finally {
      for (const stop of stops) stop();
      await client.dispose();
    }
  });

  it("shows the phone's archive, pin and mute, and its read marks, on the chat (app state and read-self from the network)", async () => {
    for (const text of ['first from Dee', 'second from Dee']) await stored(sessionId, (await sandbox.control.sendText(DEE, ME, text)).id);
    const dee = async () => ((await call('GET', `${S()}/chats?limit=200`)).body.chats as Json[]).find((c) => c.id === jid(DEE));
    expect(await dee()).toMatchObject({ unreadCount: 2, archived: false, pinned: false, muted: false, lastReadAt: null });

    // The user archives, pins and mutes the chat on the phone: app state patches the link fetches.
    await sandbox.control.chatAction(ME, DEE, { archive: true });
    await sandbox.control.chatAction(ME, DEE, { pin: true });
    await sandbox.control.chatAction(ME, DEE, { mute: Date.now() + 3600_000 });
    await waitUntil(dee, (c) => c?.archived === true && c.pinned === true && c.muted === true);
    const archived = await gql(
      app.baseUrl,
      key,
      'query($s: ID!) { session(id: $s) { chats(archived: true) { totalCount edges { node { id archived pinned muted unreadCount } } } } }',
      { s: sessionId },
    );
    expect(archived.errors).toBeUndefined();
    expect(((archived.data as Json).session as Json).chats).toEqual({
      totalCount: 1,
      edges: [{ node: { id: jid(DEE), archived: true, pinned: true, muted: true, unreadCount: 2 } }],
    });
    const rest = await call('GET', `${S()}/chats?archived=true`);
    expect((rest.body.chats as Json[]).map((c) => c.id)).toEqual([jid(DEE)]);

    // The user opens the chat on the phone: a read-self receipt clears the count and keeps when.
    expect(sandbox.control.readChat(ME, DEE).receipts).toBeGreaterThan(0);
    await waitUntil(dee, (c) => c?.unreadCount === 0);
    expect(await dee()).toMatchObject({ unreadCount: 0, lastReadAt: expect.any(String), archived: true });

    // Marked unread, then read, and unarchived, unpinned and unmuted, from the app's menus.
    await sandbox.control.chatAction(ME, DEE, { markRead: false });
    await waitUntil(dee, (c) => c?.unreadCount === 1);
    await sandbox.control.chatAction(ME, DEE, { markRead: true });
    await waitUntil(dee, (c) => c?.unreadCount === 0);
    for (const action of [{ archive: false }, { pin: false }, { mute: null }]) await sandbox.control.chatAction(ME, DEE, action);
    await waitUntil(dee, (c) => c?.archived === false && c.pinned === false && c.muted === false);
    expect((await call('GET', `${S()}/chats?archived=true`)).body.chats).toEqual([]);
  });

  it('a message sent through the API is pushed live: the message, its chat moved to it, then its delivery receipt', async () => {
    const client = createClient({
      url: `${app.baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { 'x-api-key': key },
    });
    const chats: Json[] = [];
    const messages: Json[] = [];
    const stops = [
      client.subscribe(
        {
          query: 'subscription($s: ID!) { chatUpdates(sessionId: $s) { id unreadCount lastMessage { text fromMe } } }',
          variables: { s: sessionId },
        },
        { next: (f) => void chats.push((f.data as Json).chatUpdates), error: () => undefined, complete: () => undefined },
      ),
      client.subscribe(
        {
          query:
            'subscription($s: ID!, $c: String) { storedMessageUpdates(sessionId: $s, chatId: $c) { id waMessageId text direction receipts { status deliveredAt } } }',
          variables: { s: sessionId, c: jid(CY) },
        },
        { next: (f) => void messages.push((f.data as Json).storedMessageUpdates), error: () => undefined, complete: () => undefined },
      ),
    ];
    try {
      // Subscribed once a received message is seen on both (the subscriptions start asynchronously): sent again until then.
      await waitUntil(
        async () => {
          const probe = await sandbox.control.sendText(CY, ME, 'ready?');
          await stored(sessionId, probe.id);
          await new Promise((r) => setTimeout(r, 200));
          return messages.some((m) => m.waMessageId === probe.id) && chats.some((c) => c.lastMessage?.text === 'ready?');
        },
        (seen) => seen,
      );
      const reply = await call('POST', `${S()}/send`, { to: CY, message: 'sent live from the API' });
      expect(reply.status).toBe(200);
      const pushed = await waitUntil(
        async () => messages.find((m) => m.text === 'sent live from the API'),
        (m) => m !== undefined,
      );
      expect(pushed).toMatchObject({ id: reply.body.id, direction: 'out', receipts: { status: 'SENT' } });
      const moved = await waitUntil(
        async () => chats.find((c) => c.lastMessage?.text === 'sent live from the API'),
        (c) => c !== undefined,
      );
      // The account wrote in the chat: nothing unread.
      expect(moved).toEqual({ id: jid(CY), unreadCount: 0, lastMessage: { text: 'sent live from the API', fromMe: true } });
      // The phone's delivery receipt changes the message: pushed again with it.
      const delivered = await waitUntil(
        async () => messages.find((m) => m.id === reply.body.id && (m.receipts as Json | null)?.deliveredAt),
        (m) => m !== undefined,
      );
      expect(delivered?.receipts).toMatchObject({ status: 'SENT', deliveredAt: expect.any(String) });
    } finally {
      for (const stop of stops) stop();
      await client.dispose();
    }
  });

  it("a group's chat is named by the group's subject, and renamed when the subject changes", async () => {
    const created = await call(
      'POST',
      `/v1/sessions/${otherSessionId}/groups`,
      { subject: 'Book club', participants: [ME, KIM] },
      otherKey,
    );
    expect(created.status).toBe(200);
    const groupId: string = created.body.id;
    const said = await sandbox.control.sendText(KIM, groupId, 'chapter 3 tonight');
    await stored(sessionId, said.id);
    await stored(otherSessionId, said.id);
    const groupChat = async (session: string, as: string) =>
      ((await call('GET', `/v1/sessions/${session}/chats?kind=group`, undefined, as)).body.chats as Json[]).find((c) => c.id === groupId);
    // Asked of the network once the chat is stored, so read again until the answer is in.
    expect(
      await waitUntil(
        () => groupChat(sessionId, key),
        (c) => typeof c?.name === 'string',
      ),
    ).toMatchObject({
      id: groupId,
      kind: 'group',
      name: 'Book club',
      unreadCount: 1,
      lastMessage: { text: 'chapter 3 tonight' },
    });
    expect(
      (
        await waitUntil(
          () => groupChat(otherSessionId, otherKey),
          (c) => typeof c?.name === 'string',
        )
      )?.name,
    ).toBe('Book club');

    // Another member changes the subject: the network tells this session, whose chat takes it.
    const renamed = await call('PATCH', `/v1/sessions/${otherSessionId}/groups/${groupId}`, { subject: 'Book club (fiction)' }, otherKey);
    expect(renamed.status).toBe(200);
    expect(
      (
        await waitUntil(
          () => groupChat(sessionId, key),
          (c) => c?.name === 'Book club (fiction)',
        )
      )?.name,
    ).toBe('Book club (fiction)');
    // The member that changed it is not told by the network; its own chat is renamed by the change.
    expect((await groupChat(otherSessionId, otherKey))?.name).toBe('Book club (fiction)');
    const graph = await gql(app.baseUrl, key, 'query($s: ID!, $c: String!) { session(id: $s) { chat(id: $c) { name kind } } }', {
      s: sessionId,
      c: groupId,
    });
    expect(((graph.data as Json).session as Json).chat).toEqual({ name: 'Book club (fiction)', kind: 'group' });
  });
});
