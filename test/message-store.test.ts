import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../src/generated/sqlite/client.ts';
import type { DepsOptions } from '../src/runtime/root/deps.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { ReceivedMessage } from '../src/runtime/ports/incoming.ts';
import type { InboxEntry } from '../src/runtime/sandbox/directory.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import type { Settings } from '../src/runtime/settings.ts';
import { dbKinds, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';
import { linkSession, waitUntil } from './helpers/sandbox.ts';

const ME = '15557770001';
const KIM = '15557770002';

interface Raw {
  reactionMessage?: { key?: { id?: string }; text?: string };
  extendedTextMessage?: { text?: string; contextInfo?: { stanzaId?: string; quotedMessage?: { conversation?: string } } };
}

describe.each(dbKinds)('the message store (%s): every message sent and received, one row each', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let app: TestApp;
  let key: string;
  let sessionId: string;
  const start = (overrides: Partial<Settings> = {}, options: Partial<DepsOptions> = {}) =>
    startTestApp(
      kind,
      overrides,
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 }, ...options },
      { existing: database },
    );
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  const S = () => `/v1/sessions/${sessionId}`;
  const jid = (n: string) => `${n}@s.whatsapp.net`;
  const lid = (n: string) => sandbox.control.phone(n).lid;
  /** The stored row of a network message id, once it is there (and `check` holds). */
  const row = (waMessageId: string, check: (m: Message) => boolean = () => true) =>
    waitUntil(
      () => app.db.message.findUnique({ where: { sessionId_waMessageId: { sessionId, waMessageId } } }),
      (m) => m !== null && check(m),
    ) as Promise<Message>;
  /** Waits until the service has handed the message over (it is in the buffer): everything before its receipt is written. */
  const received = (waMessageId: string) =>
    waitUntil(
      () => call('GET', `${S()}/incoming?consume=false&limit=1000`),
      (r) => (r.body.items as Json[]).some((i) => i.waMessageId === waMessageId),
    );
  const chat = () => app.db.chat.findUnique({ where: { sessionId_chatId: { sessionId, chatId: jid(KIM) } } });
  const arrived = (number: string, match: (e: InboxEntry) => boolean) =>
    waitUntil(
      async () => sandbox.control.inbox(number).find(match),
      (e) => e !== undefined,
    ) as Promise<InboxEntry>;

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    app = await start();
    key = (await app.newAccount()).apiKey;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    sandbox.control.addPhone(KIM, 'Kim');
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await database?.drop();
    await sandbox?.close();
  });

  it("stores a phone's text, image, reply with a mention; its reaction, edit and delete change the stored message", async () => {
    const text = await sandbox.control.sendText(KIM, ME, 'hello there');
    const stored = await row(text.id);
    expect(stored).toMatchObject({
      sessionId,
      waMessageId: text.id,
      direction: 'in',
      chatId: jid(KIM),
      chatLid: lid(KIM),
      sender: jid(KIM),
      senderLid: lid(KIM),
      fromMe: false,
      kind: 'text',
      text: 'hello there',
      quotedId: null,
      mentions: '[]',
      editedText: null,
      editedAt: null,
      deletedAt: null,
      source: 'live',
      outgoingId: null,
    });
    expect(stored.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(JSON.parse(stored.key)).toMatchObject({ id: text.id, fromMe: false });
    expect([jid(KIM), lid(KIM)]).toContain(JSON.parse(stored.key).remoteJid);
    expect(stored.quotable).toEqual(expect.any(String));
    expect(Math.abs(stored.messageTimestamp.getTime() - Date.now())).toBeLessThan(10 * 60_000);

    const image = await sandbox.control.sendMedia(KIM, ME, {
      type: 'image',
      data: Buffer.from('pixels'),
      mimetype: 'image/jpeg',
      caption: 'the view',
    });
    const bare = await sandbox.control.sendMedia(KIM, ME, { type: 'image', data: Buffer.from('more pixels'), mimetype: 'image/jpeg' });
    expect(await row(image.id)).toMatchObject({ direction: 'in', kind: 'image', text: 'the view', chatId: jid(KIM) });
    // A file without a caption has no text (its buffer item's content, '[image]', is a description).
    expect(await row(bare.id)).toMatchObject({ kind: 'image', text: null });
    // Its file is the IncomingMedia record of the same message id, written with it.
    expect(await app.db.incomingMedia.count({ where: { sessionId, messageId: { in: [image.id, bare.id] } } })).toBe(2);

    const reply = await sandbox.network.router.fromPhone(sandbox.network.requirePhone(KIM), ME, {
      extendedTextMessage: {
        text: `@${ME} see above`,
        contextInfo: { stanzaId: text.id, participant: jid(KIM), quotedMessage: { conversation: 'hello there' }, mentionedJid: [jid(ME)] },
      },
    });
    expect(await row(reply.id)).toMatchObject({
      kind: 'text',
      text: `@${ME} see above`,
      quotedId: text.id,
      mentions: JSON.stringify([jid(ME)]),
    });

    // The chat, moved on in the same write: the latest message, four unread (text, two images, reply).
    expect(await chat()).toEqual({
      sessionId,
      chatId: jid(KIM),
      chatLid: lid(KIM),
      kind: 'person',
      name: 'Kim',
      lastMessageId: reply.id,
      lastMessageAt: expect.any(Date),
      unreadCount: 4,
      createdAt: expect.any(Date),
      lastReadAt: null,
      archived: false,
      pinned: false,
      muted: false,
    });

    const reactions = () => app.db.messageReaction.findMany({ where: { messageId: stored.id } });
    const first = await sandbox.control.react(KIM, ME, text.id, '👍');
    await received(first.id);
    expect(await reactions()).toEqual([
      { messageId: stored.id, reactorKey: lid(KIM), reactor: jid(KIM), reactorLid: lid(KIM), emoji: '👍', reactedAt: expect.any(Date) },
    ]);
    // A later reaction replaces the reactor's; an empty one removes it. Reactions are no rows of their own.
    await received((await sandbox.control.react(KIM, ME, text.id, '❤️')).id);
    expect((await reactions()).map((r) => r.emoji)).toEqual(['❤️']);
    const removed = await sandbox.control.react(KIM, ME, text.id, '');
    await received(removed.id);
    expect(await reactions()).toEqual([]);
    expect(await app.db.message.count({ where: { sessionId, waMessageId: { in: [first.id, removed.id] } } })).toBe(0);

    const edit = await sandbox.control.edit(KIM, ME, text.id, 'hello there, edited');
    await received(edit.id);
    expect(await row(text.id)).toMatchObject({ text: 'hello there', editedText: 'hello there, edited', editedAt: expect.any(Date) });

    const revoke = await sandbox.control.revoke(KIM, ME, image.id);
    await received(revoke.id);
    expect(await row(image.id)).toMatchObject({ text: null, quotable: null, deletedAt: expect.any(Date), kind: 'image' });
    // A deleted message can no longer be reacted to or quoted.
    const react = await call('POST', `${S()}/messages/${image.id}/react`, { emoji: '👍' });
    expect(react.status).toBe(409);
    expect(react.body.error.code).toBe('CONFLICT');
  });

  it('a message handed over twice (redelivered after a crash before its receipt) makes one row', async () => {
    const text = await sandbox.control.sendText(KIM, ME, 'only once');
    const first = await row(text.id);
    const again: ReceivedMessage = {
      chatId: jid(KIM),
      chatLid: lid(KIM),
      from: jid(KIM),
      fromLid: lid(KIM),
      fromMe: false,
      type: 'text',
      content: 'only once, again',
      text: 'only once, again',
      pushName: 'Kim',
      messageTimestamp: Math.floor(Date.now() / 1000),
      messageId: text.id,
      key: { remoteJid: lid(KIM) ?? jid(KIM), id: text.id, fromMe: false },
    };
    await received(text.id);
    const before = await chat();
    expect(before?.lastMessageId).toBe(text.id);
    await app.deps.received.receive(sessionId, again);
    await app.deps.received.receive(sessionId, again);
    expect(await app.db.message.findMany({ where: { sessionId, waMessageId: text.id } })).toEqual([first]);
    // Nor does the chat count it again.
    expect(await chat()).toEqual(before);
  });

  it('messages received together (one write) move their chats as they would one after another', async () => {
    const base = Math.floor(Date.now() / 1000) - 1_000;
    const message = (number: string, id: string, at: number, fromMe = false, pushName = ''): ReceivedMessage => ({
      chatId: jid(number),
      chatLid: `${number}9@lid`,
      from: fromMe ? jid(ME) : jid(number),
      fromLid: fromMe ? null : `${number}9@lid`,
      fromMe,
      type: 'text',
      content: id,
      text: id,
      pushName,
      messageTimestamp: base + at,
      messageId: id,
      key: { remoteJid: jid(number), id, fromMe },
    });
    const [A, B, C] = ['15557771001', '15557771002', '15557771003'];
    // Before: A and C have one unread each.
    await app.deps.received.receive(sessionId, message(A, 'TOGETHER-A1', 100, false, 'Ann'));
    await app.deps.received.receive(sessionId, message(C, 'TOGETHER-C1', 100));
    await Promise.all(
      [
        message(A, 'TOGETHER-A2', 101),
        message(A, 'TOGETHER-A1', 100, false, 'Ann'), // delivered again: counts nothing
        message(A, 'TOGETHER-A3', 102, true), // the account wrote: nothing unread before it
        message(A, 'TOGETHER-A4', 103, false, 'Ann B.'),
        message(A, 'TOGETHER-A5', 99), // late: unread, but not the latest
        message(B, 'TOGETHER-B1', 200),
        message(B, 'TOGETHER-B1', 200), // twice in one write
        message(B, 'TOGETHER-B2', 150),
        message(C, 'TOGETHER-C2', 101),
        message(C, 'TOGETHER-C3', 102),
      ].map((m) => app.deps.received.receive(sessionId, m)),
    );
    const chatOf = (number: string) => app.db.chat.findUniqueOrThrow({ where: { sessionId_chatId: { sessionId, chatId: jid(number) } } });
    expect(await chatOf(A)).toMatchObject({
      chatLid: `${A}9@lid`,
      kind: 'person',
      name: 'Ann B.',
      lastMessageId: 'TOGETHER-A4',
      unreadCount: 2,
    });
    expect((await chatOf(A)).lastMessageAt).toEqual(new Date((base + 103) * 1000));
    expect(await chatOf(B)).toMatchObject({ lastMessageId: 'TOGETHER-B1', unreadCount: 2, name: null });
    expect(await chatOf(C)).toMatchObject({ lastMessageId: 'TOGETHER-C3', unreadCount: 3 });
    const rows = await app.db.message.findMany({
      where: { sessionId, waMessageId: { startsWith: 'TOGETHER-' } },
      orderBy: { waMessageId: 'asc' },
    });
    expect(rows.map((r) => [r.waMessageId, r.direction])).toEqual([
      ['TOGETHER-A1', 'in'],
      ['TOGETHER-A2', 'in'],
      ['TOGETHER-A3', 'out'],
      ['TOGETHER-A4', 'in'],
      ['TOGETHER-A5', 'in'],
      ['TOGETHER-B1', 'in'],
      ['TOGETHER-B2', 'in'],
      ['TOGETHER-C1', 'in'],
      ['TOGETHER-C2', 'in'],
      ['TOGETHER-C3', 'in'],
    ]);
  });

  it("stores what the API sends (out, with its record's id) and what the phone itself sends (out, no record)", async () => {
    const incoming = await sandbox.control.sendText(KIM, ME, 'ping');
    await row(incoming.id);
    const sent = await call('POST', `${S()}/send`, { to: KIM, message: `pong @${KIM}`, quotedMessageId: incoming.id, mentions: [KIM] });
    expect(sent.status).toBe(200);
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${sent.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body as Json;
    const out = await row(record.waMessageId);
    expect(out).toMatchObject({
      id: record.id,
      outgoingId: record.id,
      direction: 'out',
      fromMe: true,
      chatId: jid(KIM),
      sender: jid(ME),
      kind: 'text',
      text: `pong @${KIM}`,
      quotedId: incoming.id,
      mentions: JSON.stringify([jid(KIM)]),
    });
    expect(JSON.parse(out.key)).toMatchObject({ id: record.waMessageId, fromMe: true });
    // The account wrote in the chat: its latest message, nothing unread.
    expect(await chat()).toMatchObject({ chatId: jid(KIM), lastMessageId: record.waMessageId, unreadCount: 0, name: 'Kim' });
    // Its receipts stay on its record, read through the relation.
    const withRecord = await app.db.message.findUniqueOrThrow({ where: { id: out.id }, include: { outgoing: true } });
    expect(withRecord.outgoing?.status).toBe('SENT');

    // Our own edit and delete through the API change the stored message as a phone's do.
    const edited = await call('POST', `${S()}/messages/${record.id}/edit`, { text: 'pong, edited' });
    expect(edited.status).toBe(200);
    expect(await row(record.waMessageId)).toMatchObject({ text: `pong @${KIM}`, editedText: 'pong, edited', editedAt: expect.any(Date) });
    const deleted = await call('POST', `${S()}/messages/${record.id}/delete`);
    expect(deleted.status).toBe(200);
    expect(await row(record.waMessageId)).toMatchObject({ text: null, editedText: null, deletedAt: new Date(deleted.body.deletedAt) });

    // The sandbox's phone does not copy what it sends to its linked devices yet: the link's hand-over is played here.
    const fromPhone = '3EB0F10A1B2C3D4E5F6A7B';
    await app.deps.received.receive(sessionId, {
      chatId: jid(KIM),
      chatLid: lid(KIM),
      from: jid(ME),
      fromLid: lid(ME),
      fromMe: true,
      type: 'text',
      content: 'typed on the phone',
      text: 'typed on the phone',
      pushName: '',
      messageTimestamp: Math.floor(Date.now() / 1000),
      messageId: fromPhone,
      key: { remoteJid: lid(KIM) ?? jid(KIM), id: fromPhone, fromMe: true },
    });
    expect(await row(fromPhone)).toMatchObject({
      direction: 'out',
      fromMe: true,
      chatId: jid(KIM),
      sender: jid(ME),
      text: 'typed on the phone',
      outgoingId: null,
    });
  });

  it('leaves statuses out unless STORE_STATUSES_AND_CHANNELS says so', async () => {
    const status = await sandbox.control.postStatus(KIM, [ME], 'my status');
    await received(status.id);
    expect(await app.db.message.count({ where: { sessionId, waMessageId: status.id } })).toBe(0);
  });

  it('after a restart, a message received before it can be reacted to and quoted: the phone gets both', async () => {
    const before = await sandbox.control.sendText(KIM, ME, 'from before the restart');
    await received(before.id);
    await app.close();
    app = await start();
    // As main.ts does at start: the sessions that were linked re-link from their stored keys.
    await app.deps.sessions.markRelinking();
    await app.deps.sessions.resumeAll();
    // The status row says CONNECTED from before the restart; the new process's link is up when it answers for it.
    await waitUntil(
      async () => app.deps.sessions.link(sessionId) !== undefined && (await call('GET', `${S()}/status`)).body.status === 'CONNECTED',
      (up) => up,
      30_000,
    );
    const react = await call('POST', `${S()}/messages/${before.id}/react`, { emoji: '🎉' });
    expect(react.status).toBe(200);
    expect(react.body).toMatchObject({ ok: true, emoji: '🎉', messageId: null, targetWaMessageId: before.id });
    const reaction = await arrived(KIM, (e) => e.id === react.body.waMessageId);
    expect((reaction.raw as Raw).reactionMessage).toMatchObject({ text: '🎉', key: { id: before.id } });

    const reply = await call('POST', `${S()}/send`, { to: KIM, message: 'answering that', quotedMessageId: before.id });
    expect(reply.status).toBe(200);
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${reply.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body as Json;
    const quoted = await arrived(KIM, (e) => e.id === record.waMessageId);
    const context = (quoted.raw as Raw).extendedTextMessage?.contextInfo;
    expect(context?.stanzaId).toBe(before.id);
    expect(context?.quotedMessage?.conversation).toBe('from before the restart');
  }, 60_000);
});
