import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { gql, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15558830001';
const OTHER = '15558830002';
const ANN = '15558830003';
const NOBODY = '15558830999';
const jid = (n: string) => `${n}@s.whatsapp.net`;

const FAST = { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_BASE_MS: 100, WEBHOOK_POLL_MS: 50 };

// The LID-first sandbox (its default): phones write from their LID with the number beside it.
describe('chats: number check, read marks, ignore filters, presence, calls', () => {
  let ctx: Linked;
  let sessionId: string;
  let otherId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const S = () => `/v1/sessions/${sessionId}`;
  const events = (type: string) => receiver.received.filter((r) => r.payload.type === type).map((r) => r.payload.data);
  const settings = async () => (await call('GET', `${S()}/settings`)).body.settings;
  const nextIncoming = async (): Promise<Json> => {
    const res = await call('GET', `${S()}/incoming?waitMs=10000&limit=1&consume=true`);
    expect(res.body.count).toBe(1);
    return res.body.items[0];
  };

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite', FAST);
    sessionId = await linkSession(ctx, ME);
    otherId = await linkSession(ctx, OTHER, 'other');
    ctx.sandbox.control.addPhone(ANN, 'Ann');
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['message.received', 'presence.update', 'call.received'],
      sessionId,
    });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('tells which numbers are on WhatsApp, with their JID and the LID the network gave', async () => {
    const res = await call('POST', `${S()}/numbers/check`, { numbers: [ANN, NOBODY, jid(OTHER)] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      numbers: [
        { number: ANN, onWhatsApp: true, jid: jid(ANN), lid: ctx.sandbox.control.phone(ANN).lid },
        { number: NOBODY, onWhatsApp: false, jid: null, lid: null },
        { number: OTHER, onWhatsApp: true, jid: jid(OTHER), lid: ctx.sandbox.control.phone(OTHER).lid },
      ],
    });
    // the same through GraphQL (answered from what the session learnt)
    const graph = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'query($s: ID!, $n: [String!]!) { checkNumbers(sessionId: $s, numbers: $n) { number onWhatsApp jid lid } }',
      {
        s: sessionId,
        n: [ANN],
      },
    );
    expect(graph.data?.checkNumbers).toEqual([{ number: ANN, onWhatsApp: true, jid: jid(ANN), lid: ctx.sandbox.control.phone(ANN).lid }]);
  });

  it('refuses more than 50 numbers or a bad one (400, validated before 404 and 409)', async () => {
    const many = await call('POST', `${S()}/numbers/check`, { numbers: Array.from({ length: 51 }, (_, i) => `1555000${1000 + i}`) });
    expect({ status: many.status, code: many.body.error.code, details: many.body.error.details }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
      details: [{ path: 'numbers', message: 'at most 50 numbers per request' }],
    });
    const bad = await call('POST', `${S()}/numbers/check`, { numbers: [ANN, '+1 555'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ path: 'numbers[1]', message: expect.stringContaining('5 to 20 digits') }]);
    const idle = (await call('POST', '/v1/sessions', { name: 'idle' })).body.id;
    expect((await call('POST', `/v1/sessions/${idle}/numbers/check`, { numbers: ['x'] })).status).toBe(400);
    expect((await call('POST', '/v1/sessions/nope/numbers/check', { numbers: [ANN] })).status).toBe(404);
    const notConnected = await call('POST', `/v1/sessions/${idle}/numbers/check`, { numbers: [ANN] });
    expect({ status: notConnected.status, code: notConnected.body.error.code }).toEqual({ status: 409, code: 'SESSION_NOT_CONNECTED' });
  });

  it('marks a chat read only once sendReadReceipts is on; the phone sees its messages read', async () => {
    const first = await ctx.sandbox.control.sendText(ANN, ME, 'did you see this?');
    const second = await ctx.sandbox.control.sendText(ANN, ME, 'and this?');
    await nextIncoming();
    await nextIncoming();

    const off = await call('POST', `${S()}/chats/${ANN}/read`, {});
    expect({ status: off.status, code: off.body.error.code }).toEqual({ status: 409, code: 'CONFLICT' });
    expect(off.body.error.message).toContain('sendReadReceipts');
    expect(ctx.sandbox.control.readsOf(ANN, first.id)).toEqual([]);

    const badSettings = await call('PATCH', `${S()}/settings`, { sendReadReceipts: 'yes', nope: true });
    expect(badSettings.status).toBe(400);
    expect(badSettings.body.error.code).toBe('VALIDATION_FAILED');
    expect((await settings()).sendReadReceipts).toBe(false);
    const on = await call('PATCH', `${S()}/settings`, { sendReadReceipts: true });
    expect(on.body).toEqual({
      ok: true,
      settings: {
        sendReadReceipts: true,
        ignoreGroups: false,
        ignoreStatuses: false,
        ignoreBroadcasts: false,
        ignoreChannels: false,
        rejectCalls: false,
        rejectCallsMessage: null,
        sendIntervalMs: null,
        sendJitterMs: null,
        perChatIntervalMs: null,
        typingMsPerChar: null,
        warmup: null,
      },
    });

    const badIds = await call('POST', `${S()}/chats/${ANN}/read`, { messageIds: [] });
    expect(badIds.status).toBe(400);
    expect((await call('POST', `${S()}/chats/not-a-chat/read`, {})).status).toBe(400);

    // one message by id, then the rest of the chat
    const one = await call('POST', `${S()}/chats/${ANN}/read`, { messageIds: [first.id] });
    expect(one.body).toEqual({ ok: true, chatId: jid(ANN), read: [first.id], unknown: [] });
    await waitUntil(
      async () => ctx.sandbox.control.readsOf(ANN, first.id),
      (marks) => marks.length > 0,
    );
    expect(ctx.sandbox.control.readsOf(ANN, first.id)[0]?.by).toBe(ME);
    expect(ctx.sandbox.control.readsOf(ANN, second.id)).toEqual([]);
    const rest = await call('POST', `${S()}/chats/${ANN}/read`, {});
    expect(rest.body).toEqual({ ok: true, chatId: jid(ANN), read: [second.id], unknown: [] });
    const marks = await waitUntil(
      async () => ctx.sandbox.control.readsOf(ANN, second.id),
      (m) => m.length > 0,
    );
    expect(marks[0]?.by).toBe(ME);
  });

  it('drops ignored group messages (no incoming item, no webhook) while 1:1 messages arrive', async () => {
    const created = await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${otherId}/groups`, {
      key: ctx.key,
      body: { subject: 'noisy', participants: [ME] },
    });
    const groupId: string = created.body.id;
    // before the filter: the group's message arrives
    await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${otherId}/groups/${groupId}/send`, {
      key: ctx.key,
      body: { message: 'hello group' },
    });
    const seen = await nextIncoming();
    expect({ chatId: seen.chatId, content: seen.content }).toEqual({ chatId: groupId, content: 'hello group' });

    expect((await call('PATCH', `${S()}/settings`, { ignoreGroups: true })).body.settings.ignoreGroups).toBe(true);
    await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${otherId}/groups/${groupId}/send`, { key: ctx.key, body: { message: 'ignored' } });
    await ctx.sandbox.control.sendText(ANN, ME, 'direct');
    const next = await nextIncoming();
    expect({ chatId: next.chatId, content: next.content }).toEqual({ chatId: jid(ANN), content: 'direct' });
    await waitUntil(
      async () => events('message.received').map((d) => d.content),
      (contents) => contents.includes('direct'),
    );
    expect(events('message.received').map((d) => d.content)).not.toContain('ignored');
    expect((await call('GET', `${S()}/incoming?limit=100`)).body.count).toBe(0);
  });

  it('passes on the presence of a subscribed chat (webhook and subscription) and sets our own', async () => {
    // before a subscription the network sends nothing
    expect(ctx.sandbox.control.sendPresence(ANN, ME, 'available').delivered).toBe(0);
    const client = createClient({
      url: `${ctx.app.baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { 'x-api-key': ctx.key },
    });
    const pushed: Json[] = [];
    client.subscribe(
      { query: `subscription($s: ID!) { presenceUpdates(sessionId: $s) { chatId from fromLid presence } }`, variables: { s: sessionId } },
      { next: (frame) => pushed.push(frame.data?.presenceUpdates), error: () => undefined, complete: () => undefined },
    );
    try {
      expect((await call('POST', `${S()}/presence/${ANN}/subscribe`)).body).toEqual({ ok: true, chatId: jid(ANN) });
      // typing until the subscription (which starts on its own time) hears it
      await waitUntil(
        async () => {
          expect(ctx.sandbox.control.sendPresence(ANN, ME, 'composing').delivered).toBe(1);
          return pushed.length;
        },
        (n) => n > 0,
      );
      ctx.sandbox.control.sendPresence(ANN, ME, 'recording');
      await waitUntil(
        async () => pushed.map((p) => p.presence),
        (states) => states.includes('recording'),
      );
      const lid = ctx.sandbox.control.phone(ANN).lid;
      expect(pushed[0]).toEqual({ chatId: jid(ANN), from: jid(ANN), fromLid: lid, presence: 'composing' });
      expect(pushed.at(-1)).toEqual({ chatId: jid(ANN), from: jid(ANN), fromLid: lid, presence: 'recording' });
      const hooked = await waitUntil(
        async () => events('presence.update'),
        (e) => e.some((d) => d.presence === 'recording'),
      );
      expect(hooked[0]).toMatchObject({ sessionId, chatId: jid(ANN), from: jid(ANN), fromLid: lid, presence: 'composing', lastSeen: null });
    } finally {
      await client.dispose();
    }

    expect((await call('POST', `${S()}/presence`, { presence: 'busy' })).status).toBe(400);
    expect((await call('POST', `${S()}/presence`, { presence: 'available' })).body).toEqual({ ok: true, presence: 'available' });
    const own = await waitUntil(
      async () => ctx.sandbox.control.accountPresence(ME),
      (p) => p?.presence === 'available',
    );
    expect(own?.presence).toBe('available');
  });

  it('announces incoming calls, and rejects them with a text when the session says so', async () => {
    const ringing = ctx.sandbox.control.placeCall(ANN, ME);
    expect(ringing.delivered).toBe(1);
    const first = await waitUntil(
      async () => events('call.received'),
      (e) => e.length === 1,
    );
    expect(first[0]).toMatchObject({ sessionId, callId: ringing.callId, from: jid(ANN), isVideo: false, rejected: false });
    expect(ctx.sandbox.control.call(ringing.callId)?.status).toBe('ringing');

    const patched = await call('PATCH', `${S()}/settings`, { rejectCalls: true, rejectCallsMessage: 'Busy, write me instead' });
    expect(patched.body.settings).toMatchObject({ rejectCalls: true, rejectCallsMessage: 'Busy, write me instead' });
    const video = ctx.sandbox.control.placeCall(ANN, ME, true);
    const rejected = await waitUntil(
      async () => ctx.sandbox.control.call(video.callId),
      (c) => c?.status === 'rejected',
    );
    expect(rejected?.rejectedBy?.startsWith(`${ME}:`)).toBe(true);
    await waitUntil(
      async () => ctx.sandbox.control.inbox(ANN).map((e) => e.content),
      (contents) => contents.includes('Busy, write me instead'),
    );
    const second = await waitUntil(
      async () => events('call.received'),
      (e) => e.length === 2,
    );
    expect(second[1]).toMatchObject({ callId: video.callId, isVideo: true, rejected: true });
  });
});
