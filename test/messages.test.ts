import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleSendError } from '../src/resolvers/delivery.ts';
import { dbKinds, gql, graphqlWs, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15553330001';
const BOB = '15553330002';
const ME2 = '15553330003';
const CAROL = '15553330004';

describe.each(dbKinds)('messaging end to end: the service sends, the virtual phone decrypts (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    http(ctx.app.baseUrl, method, path, { key: ctx.key, body, headers });
  const inboxOf = (number: string) => ctx.sandbox.control.inbox(number);
  /** Presence travels to the network only (phones keep no inbox entry for it), so the network's trace shows it. */
  const composingShown = () => ctx.sandbox.control.trace().some((t) => t.direction === 'in' && t.stanza.includes('composing'));
  const accountId = async () => (await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } })).accountId;
  const today = () => new Date().toISOString().slice(0, 10);
  const usageToday = async () =>
    (await ctx.app.db.dailyUsage.findUnique({ where: { accountId_day: { accountId: await accountId(), day: today() } } }))?.count ?? 0;
  const setUsageToday = async (count: number) => {
    const key = { accountId: await accountId(), day: today() };
    await ctx.app.db.dailyUsage.upsert({ where: { accountId_day: key }, create: { ...key, count }, update: { count } });
  };

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, { DAILY_QUOTA: 40 });
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB, 'Bob');
    ctx.sandbox.control.addPhone(CAROL, 'Carol');
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('sends text on all three routes and records each SENT with its network id', async () => {
    const a = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'one' });
    const b = await call('POST', '/v1/sessions/api/send', { sessionId, to: `${BOB}@s.whatsapp.net`, message: 'two' });
    const c = await call('POST', '/v1/whatsapp/send', { sessionId, to: BOB, message: 'three' });
    for (const res of [a, b, c]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    }
    await waitUntil(
      async () => inboxOf(BOB).map((e) => e.content),
      (texts) => texts.includes('three'),
    );
    expect(
      inboxOf(BOB)
        .filter((e) => e.kind === 'text')
        .map((e) => e.content),
    ).toEqual(['one', 'two', 'three']);
    const record = await call('GET', `/v1/sessions/${sessionId}/messages/${a.body.id}`);
    expect(record.body).toMatchObject({
      id: a.body.id,
      sessionId,
      toNumber: `${BOB}@s.whatsapp.net`,
      content: 'one',
      status: 'SENT',
      remoteJid: `${BOB}@s.whatsapp.net`,
    });
    expect(inboxOf(BOB).find((e) => e.content === 'one')?.id).toBe(record.body.waMessageId);
  });

  it('lists history newest first, filtered by status and exact recipient', async () => {
    const all = await call('GET', `/v1/sessions/${sessionId}/messages?limit=2`);
    expect(all.body.count).toBe(2);
    expect(all.body.items.map((m: { content: string }) => m.content)).toEqual(['three', 'two']);
    const sent = await call('GET', `/v1/sessions/${sessionId}/messages?status=SENT&to=${BOB}@s.whatsapp.net`);
    expect(sent.body.count).toBe(3);
    expect((await call('GET', `/v1/sessions/${sessionId}/messages?status=FAILED`)).body).toEqual({ count: 0, items: [] });
    expect((await call('GET', `/v1/sessions/${sessionId}/messages?status=LOST`)).status).toBe(400);
  });

  it('keeps every character of texts sent at once: emoji, quotes, backslashes, newlines, JSON', async () => {
    const texts = ['😀 "quoted" and \\backslash\\', 'two\nlines\tand a tab, {"looks": ["like", "json"]}', "it's ünïcödé — ok"];
    const sent = await Promise.all(texts.map((message) => call('POST', `/v1/sessions/${sessionId}/send`, { to: CAROL, message })));
    for (const res of sent) expect(res.status).toBe(200);
    await waitUntil(
      async () => inboxOf(CAROL).length,
      (n) => n >= texts.length,
    );
    expect(
      inboxOf(CAROL)
        .map((e) => e.content)
        .sort(),
    ).toEqual([...texts].sort());
    for (const [i, res] of sent.entries()) {
      const record = await call('GET', `/v1/sessions/${sessionId}/messages/${res.body.id}`);
      expect(record.body).toMatchObject({ content: texts[i], status: 'SENT' });
    }
  });

  it('sends interactive buttons, with the rules of the spec', async () => {
    const ok = await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
      chatId: BOB,
      body: 'Pick one',
      footer: 'thanks',
      buttons: [
        { type: 'reply', text: 'Yes' },
        { type: 'url', text: 'Site', url: 'https://example.com' },
        { type: 'phone', text: 'Call', phoneNumber: '15551234567' },
      ],
    });
    expect(ok.body).toEqual({ ok: true, id: expect.any(String) });
    const entry = await waitUntil(async () => inboxOf(BOB).find((e) => e.kind === 'buttons'), Boolean);
    expect(entry?.content).toBe('Pick one [Yes] [Site] [Call]');

    const four = await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
      chatId: BOB,
      body: 'x',
      buttons: [1, 2, 3, 4].map((i) => ({ type: 'reply', text: `b${i}` })),
    });
    expect(four.status).toBe(400);
    const bad = await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
      chatId: BOB,
      body: 'x',
      footer: 'f'.repeat(61),
      buttons: [
        { type: 'reply', text: 'x'.repeat(21) },
        { type: 'url', text: 'u' },
        { type: 'call', text: 'c', phoneNumber: '123' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'buttons[0].text',
      'buttons[1].url',
      'buttons[2].phoneNumber',
      'footer',
    ]);
  });

  it('sends list sections as plain text without a list', async () => {
    await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
      chatId: BOB,
      body: 'Menu body',
      footer: 'gone',
      sections: [{ title: 'S', rows: [{ title: 'r', rowId: '1' }] }],
    });
    const entry = await waitUntil(async () => inboxOf(BOB).find((e) => e.content === 'Menu body'), Boolean);
    expect(entry?.kind).toBe('text');
  });

  it('sends a contact card and a location through messages/rich, and refuses two kinds at once', async () => {
    await call('POST', `/v1/sessions/${sessionId}/messages/rich`, { to: BOB, contactName: 'Carol', contactPhone: '15550009999' });
    await call('POST', `/v1/sessions/${sessionId}/messages/rich`, { to: BOB, latitude: 48.85, longitude: 2.35, locationName: 'Paris' });
    await waitUntil(async () => inboxOf(BOB).find((e) => e.kind === 'location'), Boolean);
    expect(inboxOf(BOB).find((e) => e.kind === 'contact')?.content).toBe('Carol');
    expect(inboxOf(BOB).find((e) => e.kind === 'location')?.content).toBe('48.85,2.35 Paris');
    const both = await call('POST', `/v1/sessions/${sessionId}/messages/rich`, {
      to: BOB,
      contactName: 'C',
      contactPhone: '1555000',
      latitude: 1,
      longitude: 2,
    });
    expect(both.status).toBe(400);
    expect((await call('POST', `/v1/sessions/${sessionId}/messages/rich`, { to: BOB })).status).toBe(400);
  });

  it('edits a sent message through the network', async () => {
    const sent = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'helo' });
    await waitUntil(async () => inboxOf(BOB).find((e) => e.content === 'helo'), Boolean);
    const edited = await call('POST', `/v1/sessions/${sessionId}/messages/${sent.body.id}/edit`, { text: 'hello' });
    expect(edited.body).toEqual({ ok: true, id: sent.body.id });
    await waitUntil(async () => inboxOf(BOB).find((e) => e.id === inboxOf(BOB).find((x) => x.kind === 'edit')?.id), Boolean);
    const original = await call('GET', `/v1/sessions/${sessionId}/messages/${sent.body.id}`);
    expect(inboxOf(BOB).find((e) => e.id === original.body.waMessageId)?.content).toBe('hello');
  });

  it('refuses to edit a record without a network id (409 MESSAGE_NOT_EDITABLE) or an unknown one (404)', async () => {
    const row = await ctx.app.db.outgoingMessage.create({
      data: {
        accountId: (await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } })).accountId,
        sessionId,
        toNumber: `${BOB}@s.whatsapp.net`,
        content: 'old',
        status: 'SENT',
      },
    });
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/${row.id}/edit`, { text: 'x' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('MESSAGE_NOT_EDITABLE');
    expect((await call('POST', `/v1/sessions/${sessionId}/messages/00000000-0000-0000-0000-000000000000/edit`, { text: 'x' })).status).toBe(
      404,
    );
  });

  it('shows "composing" then sends the text for messages/typing', async () => {
    ctx.sandbox.control.setTrace(true);
    // delayMs is a number in the spec, not only an integer
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/typing`, { to: BOB, text: 'typed', delayMs: 50.5 });
    ctx.sandbox.control.setTrace(false);
    expect(res.body).toEqual({ ok: true });
    await waitUntil(async () => inboxOf(BOB).find((e) => e.content === 'typed'), Boolean);
    expect(composingShown()).toBe(true);
    ctx.sandbox.control.dispose();
  });

  it('refuses messages/typing over the quota with 429 before showing "composing" or waiting', async () => {
    const used = await usageToday();
    await setUsageToday(40);
    ctx.sandbox.control.setTrace(true);
    const started = Date.now();
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/typing`, { to: BOB, text: 'typed over quota', delayMs: 3000 });
    const elapsed = Date.now() - started;
    ctx.sandbox.control.setTrace(false);
    await setUsageToday(used);
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(elapsed).toBeLessThan(1500);
    await new Promise((r) => setTimeout(r, 200));
    expect(composingShown()).toBe(false);
    ctx.sandbox.control.dispose();
    expect(inboxOf(BOB).some((e) => e.content === 'typed over quota')).toBe(false);
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: 'typed over quota' } })).toBe(0);
    expect(await usageToday()).toBe(used);
  });

  it('replays an Idempotency-Key retry without sending twice', async () => {
    const headers = { 'Idempotency-Key': 'retry-123' };
    const first = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'exactly once' }, headers);
    const second = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'exactly once' }, headers);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    await new Promise((r) => setTimeout(r, 200));
    expect(inboxOf(BOB).filter((e) => e.content === 'exactly once')).toHaveLength(1);

    // A day later the key is forgotten: the same request is a new send.
    await ctx.app.db.idempotentRequest.updateMany({
      where: { key: { endsWith: ' retry-123' } },
      data: { createdAt: new Date(Date.now() - 24 * 3600 * 1000 - 1000) },
    });
    const later = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'exactly once' }, headers);
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.id).not.toBe(first.body.id);
    await waitUntil(
      async () => inboxOf(BOB).filter((e) => e.content === 'exactly once').length,
      (n) => n === 2,
    );
    expect(await ctx.app.db.idempotentRequest.count({ where: { key: { endsWith: ' retry-123' } } })).toBe(1);
  });

  it('scopes an Idempotency-Key to the session path, and refuses it with another body (409 CONFLICT)', async () => {
    const other = await linkSession(ctx, ME2, 'second');
    const headers = { 'Idempotency-Key': 'shared-key' };
    const onA = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'key on A' }, headers);
    const onB = await call('POST', `/v1/sessions/${other}/send`, { to: BOB, message: 'key on B' }, headers);
    expect(onA.status).toBe(200);
    expect(onB.status).toBe(200);
    expect(onB.headers.get('idempotent-replayed')).toBeNull();
    expect(onB.body).toEqual({ ok: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(onB.body.id).not.toBe(onA.body.id);
    await waitUntil(
      async () => inboxOf(BOB).map((e) => e.content),
      (t) => t.includes('key on A') && t.includes('key on B'),
    );
    const recordB = await call('GET', `/v1/sessions/${other}/messages/${onB.body.id}`);
    expect(recordB.body).toMatchObject({ sessionId: other, content: 'key on B', status: 'SENT' });

    // the same key and route with another body is the caller's mistake: refused, nothing sent
    const changed = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'key on A, changed' }, headers);
    expect(changed.status).toBe(409);
    expect(changed.body).toEqual({
      ok: false,
      error: { code: 'CONFLICT', message: 'This Idempotency-Key was already used on this route with another body' },
    });
    // the same body, its fields in another order, is a retry: replayed
    const retry = await call('POST', `/v1/sessions/${sessionId}/send`, { message: 'key on A', to: BOB }, headers);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(onA.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    await new Promise((r) => setTimeout(r, 200));
    expect(inboxOf(BOB).filter((e) => e.content.startsWith('key on A'))).toHaveLength(1);
    expect(inboxOf(BOB).filter((e) => e.content === 'key on B')).toHaveLength(1);
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: { startsWith: 'key on' } } })).toBe(2);
    await call('DELETE', `/v1/sessions/${other}`);
  });

  it('looks at an Idempotency-Key only once the body is valid, on every route that honours one', async () => {
    const s = `/v1/sessions/${sessionId}`;
    const status = { type: 'text', text: 'x', statusJidList: [BOB] };
    const routes: Array<[string, unknown, unknown]> = [
      ['/v1/sessions/api/send', { sessionId, to: BOB, message: 'x' }, { sessionId }],
      ['/v1/whatsapp/send', { sessionId, to: BOB, message: 'x' }, { sessionId }],
      [`${s}/send`, { to: BOB, message: 'x' }, { to: BOB }],
      [`${s}/send-media`, { to: BOB, mediaType: 'image', url: 'https://files.example.com/photo.jpg' }, { to: BOB, mediaType: 'gif' }],
      [`${s}/send-interactive`, { chatId: BOB, body: 'x', buttons: [{ type: 'reply', text: 'ok' }] }, { chatId: BOB }],
      [`${s}/messages/rich`, { to: BOB, latitude: 1, longitude: 2 }, { to: BOB }],
      [`${s}/messages/typing`, { to: BOB, text: 'x' }, { to: BOB }],
      [`${s}/messages/00000000-0000-0000-0000-000000000000/edit`, { text: 'x' }, {}],
      [`${s}/groups/120363000000000001@g.us/send`, { message: 'x' }, {}],
      [
        `${s}/groups/120363000000000001@g.us/send-media`,
        { mediaType: 'image', url: 'https://files.example.com/photo.jpg' },
        { mediaType: 'image' },
      ],
      [`${s}/groups/120363000000000001@g.us/send-interactive`, { body: 'x', buttons: [{ type: 'reply', text: 'ok' }] }, { body: 'x' }],
      [`${s}/channels/120363000000000002@newsletter/send`, { text: 'x' }, {}],
      [`${s}/status/send`, status, { type: 'text' }],
      [`${s}/status/schedule`, { payload: status, delayMs: 1000 }, { payload: status }],
      [`${s}/status/recurring`, { payload: status, everyMs: 60_000 }, { payload: status }],
      [`${s}/messages/campaign`, { contacts: [{ jid: BOB }], template: 'x' }, { contacts: [] }],
      [`${s}/messages/bulk-send`, { contacts: [{ jid: BOB }], template: 'x' }, { contacts: [] }],
      [`${s}/messages/variations`, { to: BOB, variations: ['x'] }, { to: BOB }],
      [`${s}/messages/schedule`, { to: BOB, message: 'x', delayMs: 1000 }, { to: BOB }],
      [`${s}/messages/recurring`, { to: BOB, message: 'x', everyMs: 60_000 }, { to: BOB }],
      [`${s}/bulk/contact-group/00000000-0000-0000-0000-000000000000`, { message: 'x' }, {}],
      [`${s}/bulk/tag/vip`, { message: 'x' }, {}],
    ];
    // Each key is held by a request of another body that is still running.
    const accountId = (await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } })).accountId;
    await ctx.app.db.idempotentRequest.createMany({
      data: routes.map(([path]) => ({ accountId, key: `POST ${path} held`, route: `POST ${path} sha256:other`, status: 0, body: '' })),
    });
    const headers = { 'Idempotency-Key': 'held' };
    for (const [path, valid, invalid] of routes) {
      const bad = await call('POST', path, invalid, headers);
      expect([path, bad.status, bad.body.error.code]).toEqual([path, 400, 'VALIDATION_FAILED']);
      const good = await call('POST', path, valid, headers);
      expect([path, good.status, good.body.error.code]).toEqual([path, 409, 'CONFLICT']);
    }
    await ctx.app.db.idempotentRequest.deleteMany({ where: { key: { endsWith: ' held' } } });
  });

  it('validates before looking at the session: 400, then 404, then 409', async () => {
    const { body: idle } = await call('POST', '/v1/sessions', { name: 'idle' });
    expect((await call('POST', `/v1/sessions/${idle.id}/send`, { to: 'nope', message: 'x' })).status).toBe(400);
    expect((await call('POST', `/v1/sessions/00000000-0000-0000-0000-000000000000/send`, { to: BOB, message: 'x' })).status).toBe(404);
    const res = await call('POST', `/v1/sessions/${idle.id}/send`, { to: BOB, message: 'x' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('SESSION_NOT_CONNECTED');
  });

  it('lists every failing field of the shortcut sends, sessionId included', async () => {
    const missing = 'Invalid input: expected string, received undefined';
    for (const path of ['/v1/whatsapp/send', '/v1/sessions/api/send']) {
      const empty = await call('POST', path, {});
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({
        ok: false,
        error: {
          code: 'VALIDATION_FAILED',
          message: 'The request is not valid',
          details: [
            { path: 'sessionId', message: missing },
            { path: 'to', message: missing },
            { path: 'message', message: missing },
          ],
        },
      });
      const some = await call('POST', path, { sessionId: '', to: 'nope', message: 'x' });
      expect(some.body.error.details).toEqual([
        { path: 'sessionId', message: 'is required' },
        { path: 'to', message: 'must be a number (digits only, no +) or a full JID' },
      ]);
      const unknown = await call('POST', path, { sessionId: '00000000-0000-0000-0000-000000000000', to: BOB, message: 'x' });
      expect(unknown.status).toBe(404);
    }
  });

  it('buffers incoming messages with the spec fields; long-poll wakes at once; consume removes what it returned', async () => {
    const started = Date.now();
    const poll = call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=20000`);
    setTimeout(() => void ctx.sandbox.control.sendText(BOB, ME, 'ping from Bob'), 100);
    const res = await poll;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.body.consumed).toBe(true);
    expect(res.body.count).toBe(1);
    expect(res.body.items[0]).toEqual({
      eventId: expect.any(Number),
      sessionId,
      chatId: `${BOB}@s.whatsapp.net`,
      chatLid: ctx.sandbox.control.phone(BOB).lid,
      from: `${BOB}@s.whatsapp.net`,
      fromLid: ctx.sandbox.control.phone(BOB).lid,
      fromMe: false,
      type: 'text',
      content: 'ping from Bob',
      pushName: 'Bob',
      messageTimestamp: expect.any(Number),
      receivedAt: expect.stringMatching(/Z$/),
      waMessageId: expect.any(String),
    });
    expect((await call('GET', `/v1/sessions/${sessionId}/incoming`)).body).toEqual({ count: 0, consumed: true, items: [] });

    await ctx.sandbox.control.sendText(BOB, ME, 'kept');
    await waitUntil(
      async () => ctx.app.deps.incoming.size(sessionId),
      (n) => n === 1,
    );
    const peek = await call('GET', `/v1/sessions/${sessionId}/incoming?consume=false`);
    expect(peek.body).toMatchObject({ count: 1, consumed: false });
    expect((await call('GET', `/v1/sessions/${sessionId}/incoming`)).body.items[0].content).toBe('kept');
    expect((await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=-1`)).status).toBe(400);
  });

  it('pushes incoming messages over the GraphQL subscription', async () => {
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
    const got: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe<{ incomingMessages: { content: string; type: string } }>(
        { query: `subscription($s: ID!) { incomingMessages(sessionId: $s) { content type from } }`, variables: { s: sessionId } },
        {
          next: (msg) => {
            if (msg.data) got.push(msg.data.incomingMessages.content);
            if (got.length === 2) resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    await new Promise((r) => setTimeout(r, 200));
    await ctx.sandbox.control.sendText(BOB, ME, 'sub one');
    await ctx.sandbox.control.sendText(BOB, ME, 'sub two');
    await done;
    expect(got).toEqual(['sub one', 'sub two']);
    await client.dispose();
  });

  it('offers the same sends and history through GraphQL', async () => {
    const res = await gql(
      ctx.app.baseUrl,
      ctx.key,
      `mutation($s: ID!) { sendText(sessionId: $s, to: "${BOB}", message: "via graphql") { ok id } }`,
      { s: sessionId },
    );
    expect(res.data.sendText.ok).toBe(true);
    const history = await gql(
      ctx.app.baseUrl,
      ctx.key,
      `query($s: ID!) { session(id: $s) { status messages(first: 1) { edges { node { id content status sentAt } } } } }`,
      { s: sessionId },
    );
    expect(history.data.session.status).toBe('CONNECTED');
    expect(history.data.session.messages.edges[0].node).toEqual({
      id: res.data.sendText.id,
      content: 'via graphql',
      status: 'SENT',
      sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    await waitUntil(async () => inboxOf(BOB).find((e) => e.content === 'via graphql'), Boolean);
  });

  it('honours idempotencyKey and the Idempotency-Key header on GraphQL sends: a retry gets the first answer and sends nothing', async () => {
    const send = (message: string, to: string, key?: string, headers?: Record<string, string>) =>
      http(ctx.app.baseUrl, 'POST', '/graphql', {
        key: ctx.key,
        headers,
        body: {
          query:
            'mutation($s: ID!, $to: String!, $m: String!, $k: String) { sendText(sessionId: $s, to: $to, message: $m, idempotencyKey: $k) { ok id } }',
          variables: { s: sessionId, to, m: message, k: key },
        },
      });
    const first = await send('idem graph', BOB, 'graph-key-1');
    expect(first.body.data.sendText).toEqual({ ok: true, id: expect.any(String) });
    const retry = await send('idem graph', BOB, 'graph-key-1');
    expect(retry.body.data.sendText).toEqual(first.body.data.sendText);
    // The same key with another input is a conflict, never the other request's answer.
    const other = await send('idem graph changed', BOB, 'graph-key-1');
    expect(other.body.errors[0].extensions.code).toBe('CONFLICT');
    // Validation comes before the key: an invalid input is VALIDATION_FAILED whatever its key.
    const invalid = await send('idem graph', 'not a number', 'graph-key-1');
    expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'to' }] });
    // Without the argument, the request's Idempotency-Key header is the key.
    const header = { 'idempotency-key': 'graph-header-1' };
    const viaHeader = await send('idem header', BOB, undefined, header);
    const viaHeaderAgain = await send('idem header', BOB, undefined, header);
    expect(viaHeaderAgain.body.data.sendText).toEqual(viaHeader.body.data.sendText);
    // The REST door keeps its own scope: the same key there is another request.
    const rest = await call(
      'POST',
      `/v1/sessions/${sessionId}/send`,
      { to: BOB, message: 'idem rest' },
      { 'idempotency-key': 'graph-key-1' },
    );
    expect(rest.status).toBe(200);

    await waitUntil(
      async () => inboxOf(BOB).map((e) => e.content),
      (texts) => texts.includes('idem graph') && texts.includes('idem header') && texts.includes('idem rest'),
    );
    const texts = inboxOf(BOB).map((e) => e.content);
    expect(texts.filter((t) => t === 'idem graph')).toHaveLength(1);
    expect(texts.filter((t) => t === 'idem header')).toHaveLength(1);
    expect(texts).not.toContain('idem graph changed');
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: { in: ['idem graph', 'idem header'] } } })).toBe(2);
  });

  it('sends refused buttons again as plain text, and switches buttons off after repeated refusals', async () => {
    ctx.sandbox.control.refuseButtons(ME);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const res = await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
        chatId: BOB,
        body: `refused ${n}`,
        footer: 'f',
        buttons: [{ type: 'reply', text: 'OK' }],
      });
      expect(res.body).toEqual({ ok: true, id: expect.any(String) });
      ids.push(res.body.id);
      const record = await waitUntil(
        () => call('GET', `/v1/sessions/${sessionId}/messages/${res.body.id}`),
        (r) => /\(message /.test(r.body.error ?? ''),
      );
      expect(record.body.status).toBe('FAILED');
      expect(record.body.error).toMatch(/refused .*error 479.*sent again as plain text \(message [0-9a-f-]{36}\)$/);
      // never sent: a FAILED record has no sentAt, even when the SENT mark was written before the refusal came
      expect(record.body.sentAt).toBeNull();
      const plain = await waitUntil(async () => inboxOf(BOB).find((e) => e.content === `refused ${n}`), Boolean);
      expect(plain?.kind).toBe('text');
      expect(inboxOf(BOB).filter((e) => e.content === `refused ${n}`)).toHaveLength(1);
      // the plain-text copy is a record of its own, SENT, and is what the phone received
      const copyId = /message ([0-9a-f-]{36})/.exec(record.body.error)?.[1];
      const copy = await waitUntil(
        () => call('GET', `/v1/sessions/${sessionId}/messages/${copyId}`),
        (r) => r.body.status !== 'PENDING',
      );
      expect(copy.body).toMatchObject({
        status: 'SENT',
        toNumber: `${BOB}@s.whatsapp.net`,
        content: `refused ${n}`,
        sentAt: expect.stringMatching(/Z$/),
        error: null,
      });
      expect(copy.body.waMessageId).toBe(plain?.id);
    }
    // a repeated error ack for a record already FAILED changes nothing and sends no second copy
    const first = await ctx.app.db.outgoingMessage.findUniqueOrThrow({ where: { id: ids[0] } });
    await handleSendError(ctx.app.deps, sessionId, first.waMessageId ?? '', 'repeated ack');
    await new Promise((r) => setTimeout(r, 200));
    expect(inboxOf(BOB).filter((e) => e.content === 'refused 1')).toHaveLength(1);
    expect(await ctx.app.db.outgoingMessage.findUniqueOrThrow({ where: { id: ids[0] } })).toEqual(first);
    // three refusals in a row: this session now sends interactive messages as plain text at once
    const res = await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
      chatId: BOB,
      body: 'plain now',
      buttons: [{ type: 'reply', text: 'OK' }],
    });
    const record = await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/messages/${res.body.id}`),
      (r) => r.body.status !== 'PENDING',
    );
    expect(record.body, JSON.stringify(record.body)).toMatchObject({ status: 'SENT' });
    expect((await waitUntil(async () => inboxOf(BOB).find((e) => e.content === 'plain now'), Boolean))?.kind).toBe('text');
    ctx.sandbox.control.refuseButtons(ME, false);
  });

  it('enforces the daily quota with 429 and Retry-After, sending nothing', async () => {
    const used = (await ctx.app.db.dailyUsage.findFirstOrThrow()).count;
    await ctx.app.db.dailyUsage.updateMany({ data: { count: 40 } });
    const res = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'over quota' });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    await ctx.app.db.dailyUsage.updateMany({ data: { count: used } });
    expect(inboxOf(BOB).some((e) => e.content === 'over quota')).toBe(false);
  });
});
