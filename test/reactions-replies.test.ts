import { http as mswHttp, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxEntry } from '../src/runtime/sandbox/directory.ts';
import { dbKinds, gql, graphqlWs, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15554440001';
const BOB = '15554440002';
const CAROL = '15554440003';

interface Quoted {
  conversation?: string;
  extendedTextMessage?: { text?: string };
}
/** The quoted message's text: Baileys sends a text as an extendedTextMessage, a phone may as a conversation. */
const quotedText = (q: Quoted | undefined) => q?.conversation ?? q?.extendedTextMessage?.text;

interface ContextInfo {
  stanzaId?: string;
  participant?: string;
  mentionedJid?: string[];
  quotedMessage?: Quoted;
}
interface Raw {
  reactionMessage?: { key?: { id?: string; remoteJid?: string; fromMe?: boolean }; text?: string };
  extendedTextMessage?: { text?: string; contextInfo?: ContextInfo };
  imageMessage?: { caption?: string; contextInfo?: ContextInfo };
  documentMessage?: { fileName?: string; contextInfo?: ContextInfo };
  locationMessage?: { degreesLatitude?: number; contextInfo?: ContextInfo };
  interactiveMessage?: { body?: { text?: string }; contextInfo?: ContextInfo };
  protocolMessage?: { key?: { id?: string }; type?: number | string };
}

const PHOTO = Buffer.from('not really a jpeg, but bytes the phone decrypts');
const files = setupServer(
  mswHttp.get('https://files.example.com/reply.jpg', () =>
    HttpResponse.arrayBuffer(PHOTO.buffer.slice(PHOTO.byteOffset, PHOTO.byteOffset + PHOTO.length), {
      headers: { 'content-type': 'image/jpeg' },
    }),
  ),
  mswHttp.get('https://files.example.com/reply.pdf', () =>
    HttpResponse.arrayBuffer(PHOTO.buffer.slice(PHOTO.byteOffset, PHOTO.byteOffset + PHOTO.length), {
      headers: { 'content-type': 'application/pdf' },
    }),
  ),
);

describe.each(dbKinds)('reactions, replies, mentions and deletes, end to end on the LID-first sandbox (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const inboxOf = (number: string) => ctx.sandbox.control.inbox(number);
  const raw = (entry: InboxEntry | undefined): Raw => (entry?.raw ?? {}) as Raw;
  const jid = (n: string) => `${n}@s.whatsapp.net`;
  const lid = (n: string) => ctx.sandbox.control.phone(n).lid;
  /**
   * A webhook of Bob's action `waMessageId` on `target` (a reaction: `emoji`, '' when removed; an edit:
   * the new `text`; a delete: neither), as the service posts it.
   */
  const bobsEvent = (
    type: 'message.reaction' | 'message.edited' | 'message.deleted',
    waMessageId: string,
    target: { waMessageId: string; messageId: string | null },
    { emoji = null, text = null }: { emoji?: string | null; text?: string | null } = {},
  ) => ({
    type,
    sessionId,
    chatId: jid(BOB),
    chatLid: lid(BOB),
    from: jid(BOB),
    fromLid: lid(BOB),
    fromMe: false,
    waMessageId,
    emoji,
    text,
    target: { ...target, chatId: jid(BOB) },
    messageTimestamp: expect.any(Number),
    receivedAt: expect.stringMatching(/Z$/),
  });
  /** The message.reaction webhook of Bob's reaction `waMessageId` (`emoji`, '' when removed) to our `record`. */
  const bobsReaction = (record: { id: string; waMessageId: string }, waMessageId: string, emoji: string) =>
    bobsEvent('message.reaction', waMessageId, { waMessageId: record.waMessageId, messageId: record.id }, { emoji });
  const S = () => `/v1/sessions/${sessionId}`;
  const send = async (message: string, extra: Record<string, unknown> = {}) => {
    const res = await call('POST', `${S()}/send`, { to: BOB, message, ...extra });
    expect(res.status).toBe(200);
    return (
      await waitUntil(
        () => call('GET', `${S()}/messages/${res.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body as Json;
  };
  const arrived = (number: string, match: (e: InboxEntry) => boolean) =>
    waitUntil(
      async () => inboxOf(number).find(match),
      (e) => e !== undefined,
    ) as Promise<InboxEntry>;
  /** A text from BOB, read off the long-poll: the item carries the waMessageId to react to or quote. */
  const fromBob = async (text: string): Promise<Json> => {
    const sent = await ctx.sandbox.control.sendText(BOB, ME, text);
    const res = await waitUntil(
      () => call('GET', `${S()}/incoming?waitMs=5000&limit=1`),
      (r) => r.body.count === 1,
    );
    expect(res.body.items[0]).toMatchObject({ content: text, waMessageId: sent.id });
    return res.body.items[0];
  };
  const hooks = (type: string) => receiver.received.filter((r) => r.payload.type === type).map((r) => r.payload.data as Json);

  beforeAll(async () => {
    files.listen({ onUnhandledRequest: 'bypass' });
    ctx = await startWithSandbox(kind, { WEBHOOK_ALLOW_PRIVATE: true });
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB, 'Bob');
    ctx.sandbox.control.addPhone(CAROL, 'Carol');
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['message.reaction', 'message.edited', 'message.deleted'],
    });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
    await receiver?.close();
    files.close();
  });

  it('reacts to a sent message by record id and removes the reaction: the phone decrypts the emoji and the key', async () => {
    const record = await send('react to me');
    const res = await call('POST', `${S()}/messages/${record.id}/react`, { emoji: '👍' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      waMessageId: expect.any(String),
      emoji: '👍',
      messageId: record.id,
      targetWaMessageId: record.waMessageId,
    });
    const reaction = await arrived(BOB, (e) => e.id === res.body.waMessageId);
    expect(reaction.kind).toBe('reaction');
    expect(raw(reaction).reactionMessage).toMatchObject({ text: '👍', key: { id: record.waMessageId, fromMe: true } });

    const removed = await call('POST', `${S()}/messages/${record.id}/react`, { emoji: '' });
    expect(removed.body).toMatchObject({ ok: true, emoji: '' });
    const removal = await arrived(BOB, (e) => e.id === removed.body.waMessageId);
    expect(raw(removal).reactionMessage?.key?.id).toBe(record.waMessageId);
    expect(raw(removal).reactionMessage?.text ?? '').toBe('');
  });

  it('reacts to a received message by its waMessageId (REST and GraphQL)', async () => {
    const item = await fromBob('react to mine');
    const res = await call('POST', `${S()}/messages/${item.waMessageId}/react`, { emoji: '❤️' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, emoji: '❤️', messageId: null, targetWaMessageId: item.waMessageId });
    const reaction = await arrived(BOB, (e) => e.id === res.body.waMessageId);
    expect(raw(reaction).reactionMessage).toMatchObject({ text: '❤️', key: { id: item.waMessageId } });

    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'mutation($s: ID!, $m: ID!) { reactToMessage(sessionId: $s, messageId: $m, emoji: "🎉") { ok waMessageId emoji messageId targetWaMessageId } }',
      { s: sessionId, m: item.waMessageId },
    );
    expect(q.errors).toBeUndefined();
    const viaGraph = await arrived(BOB, (e) => e.id === q.data.reactToMessage.waMessageId);
    expect(raw(viaGraph).reactionMessage).toMatchObject({ text: '🎉', key: { id: item.waMessageId } });
  });

  it('refuses a bad reaction with 400 and an unknown message with 404, sending nothing', async () => {
    const record = await send('not this way');
    const before = inboxOf(BOB).length;
    for (const body of [{ emoji: 'ok' }, { emoji: '👍👍' }, {}, { emoji: 5 }]) {
      const res = await call('POST', `${S()}/messages/${record.id}/react`, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        ok: false,
        error: {
          code: 'VALIDATION_FAILED',
          message: 'The request is not valid',
          details: [{ path: 'emoji', message: expect.any(String) }],
        },
      });
    }
    const badId = await call('POST', `${S()}/messages/not%20an%20id/react`, { emoji: 'ok' });
    expect(badId.status).toBe(400);
    expect(badId.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['emoji', 'messageId']);
    const unknown = await call('POST', `${S()}/messages/3EB0000000000000000000/react`, { emoji: '👍' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await call('POST', `${S()}/messages/${crypto.randomUUID()}/react`, { emoji: '👍' })).status).toBe(404);
    expect((await call('POST', `/v1/sessions/${crypto.randomUUID()}/messages/${record.id}/react`, { emoji: '👍' })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 300));
    expect(inboxOf(BOB).length).toBe(before);
  });

  it("a phone's reaction to our message raises message.reaction (webhook and subscription) pointing at our record", async () => {
    const record = await send('react to this, Bob');
    await arrived(BOB, (e) => e.id === record.waMessageId);
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
    const pushed: Json[] = [];
    const subscribed = new Promise<void>((resolve) => {
      client.on('connected', () => setTimeout(resolve, 200));
    });
    const stop = client.subscribe(
      {
        query: `subscription($s: ID!) { messageUpdates(sessionId: $s) { type emoji from waMessageId target { waMessageId messageId chatId } } }`,
        variables: { s: sessionId },
      },
      { next: (msg) => pushed.push(msg.data?.messageUpdates), error: () => undefined, complete: () => undefined },
    );
    try {
      await subscribed;
      const reaction = await ctx.sandbox.control.react(BOB, ME, record.waMessageId, '😂');
      const [hook] = await waitUntil(
        async () => hooks('message.reaction').filter((h) => h.waMessageId === reaction.id),
        (found) => found.length === 1,
      );
      expect(hook).toEqual(bobsReaction(record, reaction.id, '😂'));
      const [update] = await waitUntil(
        async () => pushed.filter((p) => p?.waMessageId === reaction.id),
        (found) => found.length === 1,
      );
      expect(update).toEqual({
        type: 'REACTION',
        emoji: '😂',
        from: jid(BOB),
        waMessageId: reaction.id,
        target: { waMessageId: record.waMessageId, messageId: record.id, chatId: jid(BOB) },
      });
      // The long-poll keeps the reaction as an item of its own, as before.
      const items = (await call('GET', `${S()}/incoming?limit=10`)).body.items as Json[];
      expect(items.find((i) => i.waMessageId === reaction.id)).toMatchObject({ type: 'reaction', content: '😂' });
    } finally {
      stop();
      await client.dispose();
    }
  });

  it('a phone\'s reaction removal raises message.reaction with emoji "" pointing at the message it was on', async () => {
    const record = await send('react, then think better of it');
    await arrived(BOB, (e) => e.id === record.waMessageId);
    const added = await ctx.sandbox.control.react(BOB, ME, record.waMessageId, '👎');
    await waitUntil(
      async () => hooks('message.reaction').filter((h) => h.waMessageId === added.id),
      (found) => found.length === 1,
    );
    const removal = await ctx.sandbox.control.react(BOB, ME, record.waMessageId, '');
    const [hook] = await waitUntil(
      async () => hooks('message.reaction').filter((h) => h.waMessageId === removal.id),
      (found) => found.length === 1,
    );
    expect(hook).toEqual(bobsReaction(record, removal.id, ''));
    // the long-poll's item of the removal is a reaction with no emoji
    const items = (await call('GET', `${S()}/incoming?limit=100`)).body.items as Json[];
    expect(items.find((i) => i.waMessageId === removal.id)).toMatchObject({ type: 'reaction', content: '' });
  });

  it('replies quoting a sent message and a received one: the phone decrypts stanzaId, participant and the quoted message', async () => {
    const record = await send('the original');
    const reply = await send('a reply to my own', { quotedMessageId: record.id });
    const mine = await arrived(BOB, (e) => e.id === reply.waMessageId);
    expect(mine.content).toBe('a reply to my own');
    expect(raw(mine).extendedTextMessage?.contextInfo).toMatchObject({ stanzaId: record.waMessageId, participant: jid(ME) });
    expect(quotedText(raw(mine).extendedTextMessage?.contextInfo?.quotedMessage)).toBe('the original');

    const item = await fromBob('what time is it?');
    const answer = await send('noon', { quotedMessageId: item.waMessageId });
    const theirs = await arrived(BOB, (e) => e.id === answer.waMessageId);
    expect(raw(theirs).extendedTextMessage?.contextInfo?.stanzaId).toBe(item.waMessageId);
    expect(quotedText(raw(theirs).extendedTextMessage?.contextInfo?.quotedMessage)).toBe('what time is it?');
    expect([jid(BOB), lid(BOB)]).toContain(raw(theirs).extendedTextMessage?.contextInfo?.participant);

    // GraphQL's sendText takes the same field.
    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      `mutation($s: ID!, $q: String) { sendText(sessionId: $s, to: "${BOB}", message: "via graph", quotedMessageId: $q) { id } }`,
      { s: sessionId, q: record.id },
    );
    expect(q.errors).toBeUndefined();
    const viaGraph = await arrived(BOB, (e) => e.content === 'via graph');
    expect(raw(viaGraph).extendedTextMessage?.contextInfo?.stanzaId).toBe(record.waMessageId);
  });

  it('mentions numbers and LIDs in a group, with a quote; bad mentions are a 400 and an unknown quote a 404, sending nothing', async () => {
    const group = await call('POST', `${S()}/groups`, { subject: 'Mentions', participants: [BOB, CAROL] });
    expect(group.status).toBe(200);
    const groupId: string = group.body.id;
    const first = await call('POST', `${S()}/groups/${groupId}/send`, { message: 'hello group' });
    const firstRecord = await waitUntil(
      () => call('GET', `${S()}/messages/${first.body.id}`),
      (r) => r.body.status === 'SENT',
    );
    const res = await call('POST', `${S()}/groups/${groupId}/send`, {
      message: `@${BOB} @${lid(CAROL).split('@')[0]} look`,
      mentions: [BOB, lid(CAROL)],
      quotedMessageId: first.body.id,
    });
    expect(res.status).toBe(200);
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${res.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body;
    for (const phone of [BOB, CAROL]) {
      const entry = await arrived(phone, (e) => e.id === record.waMessageId);
      expect(entry.chat).toBe(groupId);
      const context = raw(entry).extendedTextMessage?.contextInfo;
      expect(context?.mentionedJid).toEqual([jid(BOB), lid(CAROL)]);
      expect(context?.stanzaId).toBe(firstRecord.body.waMessageId);
      expect(quotedText(context?.quotedMessage)).toBe('hello group');
    }

    const before = inboxOf(BOB).length;
    const bad = await call('POST', `${S()}/groups/${groupId}/send`, {
      message: 'x',
      mentions: ['abc', `${BOB}@g.us`],
      quotedMessageId: 'no way',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['mentions[0]', 'mentions[1]', 'quotedMessageId']);
    const unknown = await call('POST', `${S()}/groups/${groupId}/send`, { message: 'x', quotedMessageId: '3EB0FFFFFFFFFFFFFFFFFF' });
    expect(unknown.status).toBe(404);
    const unknown1to1 = await call('POST', `${S()}/send`, { to: BOB, message: 'x', quotedMessageId: crypto.randomUUID() });
    expect(unknown1to1.status).toBe(404);
    await new Promise((r) => setTimeout(r, 300));
    expect(inboxOf(BOB).length).toBe(before);
    expect((await call('GET', `${S()}/messages?limit=50`)).body.items.filter((m: Json) => m.content === 'x')).toEqual([]);
  });

  it('replies with mentions on a media send and mentions in a 1:1 text: the phone decrypts the quote and mentionedJid', async () => {
    const item = await fromBob('send me the photo');
    const res = await call('POST', `${S()}/send-media`, {
      to: BOB,
      mediaType: 'image',
      url: 'https://files.example.com/reply.jpg',
      caption: `here it is @${CAROL}`,
      quotedMessageId: item.waMessageId,
      mentions: [CAROL],
    });
    expect(res.status).toBe(200);
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${res.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body;
    const image = await arrived(BOB, (e) => e.id === record.waMessageId);
    expect({ kind: image.kind, caption: image.caption, size: image.size }).toEqual({
      kind: 'image',
      caption: `here it is @${CAROL}`,
      size: PHOTO.length,
    });
    const context = raw(image).imageMessage?.contextInfo;
    expect(context).toMatchObject({ stanzaId: item.waMessageId, mentionedJid: [jid(CAROL)] });
    expect([jid(BOB), lid(BOB)]).toContain(context?.participant);
    expect(quotedText(context?.quotedMessage)).toBe('send me the photo');

    // a mention in a 1:1 chat, with a quote of our own message
    const text = await send(`@${CAROL} says hi`, { mentions: [CAROL], quotedMessageId: record.id });
    const entry = await arrived(BOB, (e) => e.id === text.waMessageId);
    expect(raw(entry).extendedTextMessage?.contextInfo).toMatchObject({
      mentionedJid: [jid(CAROL)],
      stanzaId: record.waMessageId,
      participant: jid(ME),
    });

    // GraphQL: the same fields on sendMedia's input and sendText
    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      `mutation($s: ID!, $q: String) {
        doc: sendMedia(sessionId: $s, input: { to: "${BOB}", mediaType: document, url: "https://files.example.com/reply.pdf", filename: "reply.pdf", quotedMessageId: $q, mentions: ["${CAROL}"] }) { id }
        text: sendText(sessionId: $s, to: "${BOB}", message: "graph mention", mentions: ["${lid(CAROL)}"]) { id }
      }`,
      { s: sessionId, q: item.waMessageId },
    );
    expect(q.errors).toBeUndefined();
    const doc = await arrived(BOB, (e) => e.fileName === 'reply.pdf');
    expect(raw(doc).documentMessage?.contextInfo).toMatchObject({ stanzaId: item.waMessageId, mentionedJid: [jid(CAROL)] });
    const mention = await arrived(BOB, (e) => e.content === 'graph mention');
    expect(raw(mention).extendedTextMessage?.contextInfo?.mentionedJid).toEqual([lid(CAROL)]);

    // mentions on a voice note (no caption to show them) are a 400; an unknown quote a 404; nothing is sent
    const before = inboxOf(BOB).length;
    const audio = await call('POST', `${S()}/send-media`, {
      to: BOB,
      mediaType: 'audio',
      url: 'https://files.example.com/reply.jpg',
      mentions: [CAROL],
    });
    expect({ status: audio.status, details: audio.body.error.details }).toEqual({
      status: 400,
      details: [{ path: 'mentions', message: 'only apply to an image, a video or a document (their caption)' }],
    });
    const unknown = await call('POST', `${S()}/send-media`, {
      to: BOB,
      mediaType: 'image',
      url: 'https://files.example.com/reply.jpg',
      quotedMessageId: '3EB0FFFFFFFFFFFFFFFFFE',
    });
    expect(unknown.status).toBe(404);
    await new Promise((r) => setTimeout(r, 300));
    expect(inboxOf(BOB).length).toBe(before);
  });

  it('quotes on an interactive send (with mentions) and on a rich location: the phone decrypts each contextInfo', async () => {
    const item = await fromBob('which option?');
    const res = await call('POST', `${S()}/send-interactive`, {
      chatId: BOB,
      body: `pick one, @${CAROL} too`,
      buttons: [{ type: 'reply', text: 'Yes' }],
      quotedMessageId: item.waMessageId,
      mentions: [CAROL],
    });
    expect(res.status).toBe(200);
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${res.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body;
    const buttons = await arrived(BOB, (e) => e.id === record.waMessageId);
    expect(buttons.kind).toBe('buttons');
    expect(raw(buttons).interactiveMessage?.contextInfo).toMatchObject({ stanzaId: item.waMessageId, mentionedJid: [jid(CAROL)] });
    expect(quotedText(raw(buttons).interactiveMessage?.contextInfo?.quotedMessage)).toBe('which option?');

    const rich = await call('POST', `${S()}/messages/rich`, { to: BOB, latitude: 48.85, longitude: 2.35, quotedMessageId: record.id });
    expect(rich.status).toBe(200);
    const location = await waitUntil(
      () => call('GET', `${S()}/messages/${rich.body.id}`),
      (r) => r.body.status === 'SENT',
    );
    const entry = await arrived(BOB, (e) => e.id === location.body.waMessageId);
    expect(raw(entry).locationMessage).toMatchObject({ degreesLatitude: 48.85, contextInfo: { stanzaId: record.waMessageId } });
  });

  it('typing and variations sends quote and mention (REST and GraphQL, 1:1 and a group): the phone decrypts contextInfo', async () => {
    const item = await fromBob('are you there?');
    const res = await call('POST', `${S()}/messages/typing`, {
      to: BOB,
      text: `yes, with @${CAROL}`,
      delayMs: 0,
      quotedMessageId: item.waMessageId,
      mentions: [CAROL],
    });
    expect(res.body).toEqual({ ok: true });
    const typed = await arrived(BOB, (e) => e.content === `yes, with @${CAROL}`);
    const context = raw(typed).extendedTextMessage?.contextInfo;
    expect(context).toMatchObject({ stanzaId: item.waMessageId, mentionedJid: [jid(CAROL)] });
    expect([jid(BOB), lid(BOB)]).toContain(context?.participant);
    expect(quotedText(context?.quotedMessage)).toBe('are you there?');
    expect(ctx.sandbox.control.typingSeen(BOB).some((t) => t.from === ME && t.state === 'composing')).toBe(true);
    // kept in the record's payload, so a send resumed after a crash is the same reply
    const row = await ctx.app.db.outgoingMessage.findFirstOrThrow({ where: { sessionId, waMessageId: typed.id } });
    expect(JSON.parse(row.payload)).toMatchObject({ quoted: { key: { id: item.waMessageId } }, mentions: [jid(CAROL)] });

    const group = await call('POST', `${S()}/groups`, { subject: 'Typing replies', participants: [BOB, CAROL] });
    const groupId: string = group.body.id;
    const first = await send('the plan');
    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'mutation($s: ID!, $to: String!, $q: String, $m: [String!]) { sendTyping(sessionId: $s, to: $to, text: "typed in the group", delayMs: 0, quotedMessageId: $q, mentions: $m) }',
      { s: sessionId, to: groupId, q: first.id, m: [BOB, lid(CAROL)] },
    );
    expect(q).toEqual({ status: 200, data: { sendTyping: true } });
    for (const phone of [BOB, CAROL]) {
      const entry = await arrived(phone, (e) => e.content === 'typed in the group');
      expect(entry.chat).toBe(groupId);
      expect(raw(entry).extendedTextMessage?.contextInfo).toMatchObject({
        stanzaId: first.waMessageId,
        participant: jid(ME),
        mentionedJid: [jid(BOB), lid(CAROL)],
      });
      expect(quotedText(raw(entry).extendedTextMessage?.contextInfo?.quotedMessage)).toBe('the plan');
    }

    // variations: the text chosen goes out as the same kind of reply (REST and GraphQL)
    const varied = await call('POST', `${S()}/messages/variations`, {
      to: BOB,
      variations: ['noted, thanks', 'got it, thanks'],
      quotedMessageId: item.waMessageId,
      mentions: [CAROL],
    });
    expect(varied.body).toEqual({ ok: true, count: 1, sent: [expect.stringMatching(/^(noted|got it), thanks$/)] });
    const chosen = await arrived(BOB, (e) => e.content === varied.body.sent[0]);
    expect(raw(chosen).extendedTextMessage?.contextInfo).toMatchObject({ stanzaId: item.waMessageId, mentionedJid: [jid(CAROL)] });
    expect(quotedText(raw(chosen).extendedTextMessage?.contextInfo?.quotedMessage)).toBe('are you there?');
    const viaGraph = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'mutation($s: ID!, $q: String) { sendVariation(sessionId: $s, to: "' +
        BOB +
        '", variations: ["a varied reply"], quotedMessageId: $q) { ok count sent } }',
      { s: sessionId, q: first.id },
    );
    expect(viaGraph.data?.sendVariation).toEqual({ ok: true, count: 1, sent: ['a varied reply'] });
    const graphEntry = await arrived(BOB, (e) => e.content === 'a varied reply');
    expect(raw(graphEntry).extendedTextMessage?.contextInfo).toMatchObject({ stanzaId: first.waMessageId, participant: jid(ME) });

    // an unknown quote is a 404 before "typing…" shows or the wait; bad fields a 400; nothing is sent
    const shown = ctx.sandbox.control.typingSeen(BOB).length;
    const before = inboxOf(BOB).length;
    const unknown = await call('POST', `${S()}/messages/typing`, {
      to: BOB,
      text: 'x',
      delayMs: 0,
      quotedMessageId: '3EB0FFFFFFFFFFFFFFFFFC',
    });
    expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    const unknownVariation = await call('POST', `${S()}/messages/variations`, {
      to: BOB,
      variations: ['x'],
      delayMs: 60_000,
      quotedMessageId: '3EB0FFFFFFFFFFFFFFFFFC',
    });
    expect({ status: unknownVariation.status, code: unknownVariation.body.error.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    const bad = await call('POST', `${S()}/messages/typing`, { to: BOB, text: 'x', mentions: ['abc'], quotedMessageId: 'no way' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['mentions[0]', 'quotedMessageId']);
    await new Promise((r) => setTimeout(r, 300));
    expect(ctx.sandbox.control.typingSeen(BOB).length).toBe(shown);
    expect(inboxOf(BOB).length).toBe(before);
  });

  it('deletes a sent message for everyone: the phone gets the revoke, the record shows deletedAt (REST and GraphQL)', async () => {
    const record = await send('oops, wrong chat');
    await arrived(BOB, (e) => e.id === record.waMessageId);
    const res = await call('POST', `${S()}/messages/${record.id}/delete`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, id: record.id, deletedAt: expect.stringMatching(/Z$/) });
    const revoke = await arrived(BOB, (e) => e.kind === 'revoke' && e.content === record.waMessageId);
    expect(raw(revoke).protocolMessage?.key?.id).toBe(record.waMessageId);
    expect(inboxOf(BOB).find((e) => e.id === record.waMessageId)?.deletedAt).toEqual(expect.any(String));
    expect((await call('GET', `${S()}/messages/${record.id}`)).body).toMatchObject({ id: record.id, deletedAt: res.body.deletedAt });
    // Again: nothing more is sent, the same answer.
    const revokes = inboxOf(BOB).filter((e) => e.kind === 'revoke').length;
    expect((await call('POST', `${S()}/messages/${record.id}/delete`)).body).toEqual(res.body);

    const other = await send('delete me through the graph');
    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'mutation($s: ID!, $id: ID!) { deleteMessage(sessionId: $s, id: $id) { ok id deletedAt } }',
      { s: sessionId, id: other.id },
    );
    expect(q.errors).toBeUndefined();
    await arrived(BOB, (e) => e.kind === 'revoke' && e.content === other.waMessageId);
    expect(inboxOf(BOB).filter((e) => e.kind === 'revoke').length).toBe(revokes + 1);
    const read = await gql(ctx.app.baseUrl, ctx.key, 'query($s: ID!, $id: ID!) { message(sessionId: $s, id: $id) { deletedAt } }', {
      s: sessionId,
      id: other.id,
    });
    expect(read.data.message.deletedAt).toBe(q.data.deleteMessage.deletedAt);

    expect((await call('POST', `${S()}/messages/${crypto.randomUUID()}/delete`)).status).toBe(404);
  });

  it("a phone's edit and delete of its own message raise message.edited and message.deleted pointing at the original item", async () => {
    const item = await fromBob('typo hree');
    const edit = await ctx.sandbox.control.edit(BOB, ME, item.waMessageId, 'typo here');
    const [edited] = await waitUntil(
      async () => hooks('message.edited').filter((h) => h.waMessageId === edit.id),
      (found) => found.length === 1,
    );
    expect(edited).toEqual(bobsEvent('message.edited', edit.id, { waMessageId: item.waMessageId, messageId: null }, { text: 'typo here' }));
    const revoke = await ctx.sandbox.control.revoke(BOB, ME, item.waMessageId);
    const [deleted] = await waitUntil(
      async () => hooks('message.deleted').filter((h) => h.waMessageId === revoke.id),
      (found) => found.length === 1,
    );
    expect(deleted).toEqual(bobsEvent('message.deleted', revoke.id, { waMessageId: item.waMessageId, messageId: null }));
  });
});
