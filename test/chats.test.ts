import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, graphqlWs, http } from './helpers/app.ts';
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
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
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

  it('reports a contact who stops typing as paused, after composing (webhook and subscription)', async () => {
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
    const pushed: Json[] = [];
    client.subscribe(
      { query: `subscription($s: ID!) { presenceUpdates(sessionId: $s) { chatId from fromLid presence } }`, variables: { s: sessionId } },
      { next: (frame) => pushed.push(frame.data?.presenceUpdates), error: () => undefined, complete: () => undefined },
    );
    const hookedBefore = events('presence.update').length;
    try {
      expect((await call('POST', `${S()}/presence/${ANN}/subscribe`)).body).toEqual({ ok: true, chatId: jid(ANN) });
      await waitUntil(
        async () => {
          expect(ctx.sandbox.control.sendPresence(ANN, ME, 'composing').delivered).toBe(1);
          return pushed.length;
        },
        (n) => n > 0,
      );
      expect(ctx.sandbox.control.sendPresence(ANN, ME, 'paused').delivered).toBe(1);
      await waitUntil(
        async () => pushed.map((p) => p.presence),
        (states) => states.includes('paused'),
      );
      const lid = ctx.sandbox.control.phone(ANN).lid;
      expect(pushed.slice(-2)).toEqual([
        { chatId: jid(ANN), from: jid(ANN), fromLid: lid, presence: 'composing' },
        { chatId: jid(ANN), from: jid(ANN), fromLid: lid, presence: 'paused' },
      ]);
      const hooked = await waitUntil(
        async () => events('presence.update').slice(hookedBefore),
        (e) => e.some((d) => d.presence === 'paused'),
      );
      expect(hooked.slice(-2).map((d) => d.presence)).toEqual(['composing', 'paused']);
      expect(hooked.at(-1)).toMatchObject({
        sessionId,
        chatId: jid(ANN),
        from: jid(ANN),
        fromLid: lid,
        presence: 'paused',
        lastSeen: null,
      });
    } finally {
      await client.dispose();
    }
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

/**
 * The same features through GraphQL only: settings, read marks (1:1 and in a group), presence both ways
 * and calls, each checked on what the sandbox phone saw and on the exact GraphQL answer or event.
 */
describe('chats through GraphQL: settings, read marks, presence, calls', () => {
  const ME = '15558830011';
  const ANN = '15558830013';
  const BEA = '15558830014';
  let ctx: Linked;
  let sessionId: string;
  const graph = (query: string, variables: Record<string, unknown> = {}) =>
    gql(ctx.app.baseUrl, ctx.key, query, { s: sessionId, ...variables });
  const lid = (n: string) => ctx.sandbox.control.phone(n).lid;
  const nextIncoming = async (): Promise<Json> => {
    const res = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/incoming?waitMs=10000&limit=1&consume=true`, {
      key: ctx.key,
    });
    expect(res.body.count).toBe(1);
    return res.body.items[0];
  };
  /** A graphql-ws subscription; what it pushes is collected in `pushed`. */
  const subscribe = (query: string) => {
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
    const pushed: Json[] = [];
    const errors: unknown[] = [];
    client.subscribe(
      { query, variables: { s: sessionId } },
      { next: (frame) => pushed.push(frame.data), error: (err) => errors.push(err), complete: () => undefined },
    );
    return { pushed, errors, close: () => client.dispose() };
  };
  const SETTINGS = `sendReadReceipts ignoreGroups ignoreStatuses ignoreBroadcasts ignoreChannels rejectCalls rejectCallsMessage
    sendIntervalMs sendJitterMs perChatIntervalMs typingMsPerChar warmup`;
  const DEFAULTS = {
    sendReadReceipts: false,
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
  };
  const updateSettings = (input: Record<string, unknown>) =>
    graph(`mutation($s: ID!, $i: SessionSettingsInput!) { updateSessionSettings(sessionId: $s, input: $i) { ${SETTINGS} } }`, { i: input });

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite');
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(ANN, 'Ann');
    ctx.sandbox.control.addPhone(BEA, 'Bea');
  }, 60_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('reads and changes the settings: updateSessionSettings answers them all, Session.settings shows them, null clears the message', async () => {
    const read = async () => (await graph(`query($s: ID!) { session(id: $s) { settings { ${SETTINGS} } } }`)).data?.session.settings;
    expect(await read()).toEqual(DEFAULTS);

    const changed = await updateSettings({ sendReadReceipts: true, rejectCallsMessage: 'Call me later' });
    expect(changed.errors).toBeUndefined();
    expect(changed.data?.updateSessionSettings).toEqual({ ...DEFAULTS, sendReadReceipts: true, rejectCallsMessage: 'Call me later' });
    expect(await read()).toEqual({ ...DEFAULTS, sendReadReceipts: true, rejectCallsMessage: 'Call me later' });
    // REST reads the same row
    const rest = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/settings`, { key: ctx.key });
    expect(rest.body.settings).toEqual({ ...DEFAULTS, sendReadReceipts: true, rejectCallsMessage: 'Call me later' });

    // a flag left out is kept; null clears the message
    const cleared = await updateSettings({ rejectCallsMessage: null });
    expect(cleared.data?.updateSessionSettings).toEqual({ ...DEFAULTS, sendReadReceipts: true });

    const bad = await updateSettings({ rejectCallsMessage: '   ' });
    expect(bad.data).toBeNull();
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'rejectCallsMessage', message: 'must not be empty (null clears it)' }],
    });
    const unknown = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'mutation { updateSessionSettings(sessionId: "nope", input: { ignoreGroups: true }) { ignoreGroups } }',
    );
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await read()).toEqual({ ...DEFAULTS, sendReadReceipts: true });
  });

  it('markChatRead sends read receipts the phone sees, by id then for the rest of the chat; refused while sendReadReceipts is off', async () => {
    const MARK =
      'mutation($s: ID!, $c: String!, $ids: [String!]) { markChatRead(sessionId: $s, chatId: $c, messageIds: $ids) { chatId read unknown } }';
    const first = await ctx.sandbox.control.sendText(ANN, ME, 'one');
    const second = await ctx.sandbox.control.sendText(ANN, ME, 'two');
    await nextIncoming();
    await nextIncoming();

    await updateSettings({ sendReadReceipts: false });
    const off = await graph(MARK, { c: ANN });
    expect(off.data).toBeNull();
    expect(off.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(off.errors?.[0]?.message).toContain('sendReadReceipts');
    expect((await graph(MARK, { c: 'not-a-chat' })).errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'chatId' }],
    });

    await updateSettings({ sendReadReceipts: true });
    const one = await graph(MARK, { c: ANN, ids: [first.id] });
    expect(one.errors).toBeUndefined();
    expect(one.data?.markChatRead).toEqual({ chatId: jid(ANN), read: [first.id], unknown: [] });
    const marks = await waitUntil(
      async () => ctx.sandbox.control.readsOf(ANN, first.id),
      (m) => m.length > 0,
    );
    expect(marks.map((m) => m.by)).toEqual([ME]);
    expect(ctx.sandbox.control.readsOf(ANN, second.id)).toEqual([]);

    const rest = await graph(MARK, { c: jid(ANN) });
    expect(rest.data?.markChatRead).toEqual({ chatId: jid(ANN), read: [second.id], unknown: [] });
    const secondMarks = await waitUntil(
      async () => ctx.sandbox.control.readsOf(ANN, second.id),
      (m) => m.length > 0,
    );
    expect(secondMarks.map((m) => m.by)).toEqual([ME]);
    // nothing is left unread: marking again marks nothing and sends nothing
    expect((await graph(MARK, { c: ANN })).data?.markChatRead).toEqual({ chatId: jid(ANN), read: [], unknown: [] });
    expect(ctx.sandbox.control.readsOf(ANN, first.id)).toHaveLength(1);
  });

  it('marks group messages read: the receipt names their sender, who sees it; an id the link never saw is unknown', async () => {
    await updateSettings({ sendReadReceipts: true });
    const created = await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${sessionId}/groups`, {
      key: ctx.key,
      body: { subject: 'read marks', participants: [ANN, BEA] },
    });
    expect(created.status).toBe(200);
    const groupId: string = created.body.id;
    const fromAnn = await ctx.sandbox.control.sendText(ANN, groupId, 'from Ann');
    const fromBea = await ctx.sandbox.control.sendText(BEA, groupId, 'from Bea');
    const seen = [await nextIncoming(), await nextIncoming()];
    expect(seen.map((i) => ({ chatId: i.chatId, content: i.content }))).toEqual([
      { chatId: groupId, content: 'from Ann' },
      { chatId: groupId, content: 'from Bea' },
    ]);

    const MARK =
      'mutation($s: ID!, $c: String!, $ids: [String!]) { markChatRead(sessionId: $s, chatId: $c, messageIds: $ids) { chatId read unknown } }';
    const never = '3EB0AAAAAAAAAAAAAAAAAA';
    const one = await graph(MARK, { c: groupId, ids: [fromAnn.id, never] });
    expect(one.errors).toBeUndefined();
    expect(one.data?.markChatRead).toEqual({ chatId: groupId, read: [fromAnn.id], unknown: [never] });
    const annMarks = await waitUntil(
      async () => ctx.sandbox.control.readsOf(ANN, fromAnn.id),
      (m) => m.length > 0,
    );
    expect(annMarks.map((m) => m.by)).toEqual([ME]);
    expect(ctx.sandbox.control.readsOf(BEA, fromBea.id)).toEqual([]);

    const rest = await graph(MARK, { c: groupId });
    expect(rest.data?.markChatRead).toEqual({ chatId: groupId, read: [fromBea.id], unknown: [] });
    const beaMarks = await waitUntil(
      async () => ctx.sandbox.control.readsOf(BEA, fromBea.id),
      (m) => m.length > 0,
    );
    expect(beaMarks.map((m) => m.by)).toEqual([ME]);
  });

  it('subscribePresence passes on online, offline (with last seen) and typing to presenceUpdates; setPresence sets our own', async () => {
    const sub = subscribe(
      'subscription($s: ID!) { presenceUpdates(sessionId: $s) { sessionId chatId from fromLid presence lastSeen at } }',
    );
    try {
      const asked = await graph('mutation($s: ID!, $c: String!) { subscribePresence(sessionId: $s, chatId: $c) }', { c: BEA });
      expect(asked).toEqual({ status: 200, data: { subscribePresence: true } });
      // online until both the network has the subscription and our subscription (which starts on its own time) hears it
      await waitUntil(
        async () => {
          ctx.sandbox.control.sendPresence(BEA, ME, 'available');
          return sub.pushed.length;
        },
        (n) => n > 0,
      );
      expect(sub.pushed[0].presenceUpdates).toEqual({
        sessionId,
        chatId: jid(BEA),
        from: jid(BEA),
        fromLid: lid(BEA),
        presence: 'available',
        lastSeen: null,
        at: expect.stringMatching(/Z$/),
      });

      const before = Math.floor(Date.now() / 1000) * 1000;
      expect(ctx.sandbox.control.sendPresence(BEA, ME, 'unavailable').delivered).toBe(1);
      const after = Date.now();
      const offline = await waitUntil(
        async () => sub.pushed.map((p) => p.presenceUpdates).find((u) => u.presence === 'unavailable'),
        (u) => u !== undefined,
      );
      expect(offline).toEqual({
        sessionId,
        chatId: jid(BEA),
        from: jid(BEA),
        fromLid: lid(BEA),
        presence: 'unavailable',
        lastSeen: expect.stringMatching(/Z$/),
        at: expect.stringMatching(/Z$/),
      });
      // the network's last seen is in whole seconds, taken when the phone went offline
      const lastSeen = Date.parse(offline.lastSeen);
      expect(lastSeen).toBeGreaterThanOrEqual(before);
      expect(lastSeen).toBeLessThanOrEqual(after);

      ctx.sandbox.control.sendPresence(BEA, ME, 'composing');
      await waitUntil(
        async () => sub.pushed.map((p) => p.presenceUpdates.presence),
        (states) => states.includes('composing'),
      );
      expect(sub.errors).toEqual([]);
    } finally {
      await sub.close();
    }

    const SET = 'mutation($s: ID!, $p: OwnPresence!) { setPresence(sessionId: $s, presence: $p) }';
    expect(await graph(SET, { p: 'unavailable' })).toEqual({ status: 200, data: { setPresence: 'unavailable' } });
    expect(
      (
        await waitUntil(
          async () => ctx.sandbox.control.accountPresence(ME),
          (p) => p?.presence === 'unavailable',
        )
      )?.presence,
    ).toBe('unavailable');
    expect(await graph(SET, { p: 'available' })).toEqual({ status: 200, data: { setPresence: 'available' } });
    expect(
      (
        await waitUntil(
          async () => ctx.sandbox.control.accountPresence(ME),
          (p) => p?.presence === 'available',
        )
      )?.presence,
    ).toBe('available');
    // GraphQL's enum refuses anything else before the resolver runs
    expect((await graph(SET, { p: 'busy' })).errors?.[0]?.message).toContain('OwnPresence');
  });

  it('pushes each incoming call to the calls subscription, rejected or not as the settings say', async () => {
    const sub = subscribe(
      'subscription($s: ID!) { calls(sessionId: $s) { sessionId callId from fromLid groupId isVideo offline rejected at } }',
    );
    try {
      // ring until the subscription (which starts on its own time) hears a call
      const placed: string[] = [];
      await waitUntil(
        async () => {
          if (sub.pushed.length === 0) placed.push(ctx.sandbox.control.placeCall(ANN, ME).callId);
          return sub.pushed.length;
        },
        (n) => n > 0,
        10_000,
      );
      const heard = sub.pushed[0].calls;
      expect(placed).toContain(heard.callId);
      expect(heard).toEqual({
        sessionId,
        callId: heard.callId,
        from: jid(ANN),
        fromLid: lid(ANN),
        groupId: null,
        isVideo: false,
        offline: false,
        rejected: false,
        at: expect.stringMatching(/Z$/),
      });
      expect(ctx.sandbox.control.call(heard.callId)?.status).toBe('ringing');

      const set = await updateSettings({ rejectCalls: true, rejectCallsMessage: 'In a meeting' });
      expect(set.data?.updateSessionSettings).toMatchObject({ rejectCalls: true, rejectCallsMessage: 'In a meeting' });
      const video = ctx.sandbox.control.placeCall(ANN, ME, true);
      const pushed = await waitUntil(
        async () => sub.pushed.map((p) => p.calls).find((c) => c.callId === video.callId),
        (c) => c !== undefined,
      );
      expect(pushed).toEqual({
        sessionId,
        callId: video.callId,
        from: jid(ANN),
        fromLid: lid(ANN),
        groupId: null,
        isVideo: true,
        offline: false,
        rejected: true,
        at: expect.stringMatching(/Z$/),
      });
      const call = await waitUntil(
        async () => ctx.sandbox.control.call(video.callId),
        (c) => c?.status === 'rejected',
      );
      expect(call?.rejectedBy?.startsWith(`${ME}:`)).toBe(true);
      await waitUntil(
        async () => ctx.sandbox.control.inbox(ANN).map((e) => e.content),
        (contents) => contents.includes('In a meeting'),
      );
      expect(sub.pushed.filter((p) => p.calls.callId === video.callId)).toHaveLength(1);
      expect(sub.errors).toEqual([]);
    } finally {
      await sub.close();
    }
  });
});
