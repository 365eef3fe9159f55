import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15554440001';
const BOB = '15554440002';

const FAST = {
  WEBHOOK_ALLOW_PRIVATE: true,
  WEBHOOK_RETRY_BASE_MS: 100,
  WEBHOOK_RETRY_MAX_MS: 400,
  WEBHOOK_TIMEOUT_MS: 1_000,
  WEBHOOK_POLL_MS: 50,
};

describe.each(dbKinds)('webhooks (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown, key = ctx.key) => http(ctx.app.baseUrl, method, path, { key, body });
  const create = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/webhooks', { url: receiver.url, ...body });
    expect(res.status).toBe(201);
    receiver.verifyWith(res.body.secret);
    return res.body as { id: string; secret: string };
  };
  const receivedOf = (type: string) => receiver.received.filter((r) => r.payload.type === type);

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, FAST);
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB, 'Bob');
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });
  beforeEach(async () => {
    await receiver?.close();
    receiver = await startReceiver();
    // Each test owns the endpoints it makes.
    await ctx.app.db.webhookEndpoint.deleteMany({});
    ctx.app.deps.webhooks.invalidate((await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } })).accountId);
  });

  it('creates, lists, updates and deletes endpoints; the secret is shown on create only', async () => {
    const created = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['message.sent', 'session.status'],
      sessionId,
      description: 'crm',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: receiver.url,
      events: ['message.sent', 'session.status'],
      sessionId,
      description: 'crm',
      enabled: true,
      disabledReason: null,
      failingSince: null,
      previousSecretValidUntil: null,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const id = created.body.id;
    const listed = await call('GET', '/v1/webhooks');
    expect(listed.body).toEqual(
      [{ ...created.body, secret: undefined, updatedAt: expect.any(String) }].map(({ secret: _s, ...rest }) => rest),
    );
    const patched = await call('PATCH', `/v1/webhooks/${id}`, { events: ['*'], sessionId: null, enabled: false });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['*'], sessionId: null, enabled: false, disabledReason: 'Disabled by the account' });
    expect(patched.body.secret).toBeUndefined();
    const enabled = await call('PATCH', `/v1/webhooks/${id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });

    const other = await ctx.app.newAccount();
    expect((await call('GET', `/v1/webhooks/${id}`, undefined, other.apiKey)).status).toBe(404);
    expect((await call('DELETE', `/v1/webhooks/${id}`, undefined, other.apiKey)).status).toBe(404);

    expect((await call('DELETE', `/v1/webhooks/${id}`)).body).toEqual({ ok: true });
    expect((await call('GET', `/v1/webhooks/${id}`)).status).toBe(404);
  });

  it('refuses bad input with VALIDATION_FAILED before looking anything up, and an unknown session with 404', async () => {
    const bad = await call('POST', '/v1/webhooks', { url: 'ftp://x', events: ['message.nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['events[0]', 'url']);
    const empty = await call('POST', '/v1/webhooks', { url: receiver.url, events: [] });
    expect(empty.body.error.details).toEqual([{ path: 'events', message: 'must name at least one event type, or "*"' }]);
    const noSession = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['*'], sessionId: 'nope' });
    expect(noSession.status).toBe(404);
    const badPatch = await call('PATCH', '/v1/webhooks/nope', { events: 'x' });
    expect(badPatch.status).toBe(400);
    expect((await call('PATCH', '/v1/webhooks/nope', { enabled: true })).status).toBe(404);
    expect(await ctx.app.db.webhookEndpoint.count()).toBe(0);
  });

  it('refuses private and loopback URLs unless WEBHOOK_ALLOW_PRIVATE is on', async () => {
    ctx.app.deps.settings.WEBHOOK_ALLOW_PRIVATE = false;
    try {
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://10.0.0.8/x',
        'http://[::1]/x',
        'http://169.254.169.254/latest',
      ]) {
        const res = await call('POST', '/v1/webhooks', { url, events: ['*'] });
        expect(res.status).toBe(400);
        expect(res.body.error.details).toEqual([
          {
            path: 'url',
            message:
              'must point to a public address (private, loopback and link-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE=true)',
          },
        ]);
      }
    } finally {
      ctx.app.deps.settings.WEBHOOK_ALLOW_PRIVATE = true;
    }
  });

  it('connects to the address the checked lookup gave, and refuses a name that resolves to a private address', async () => {
    // The name exists only in the service's resolver (here: anything but *.example.com is 127.0.0.1), so
    // reaching the receiver proves the connection went where the check looked.
    const named = receiver.url.replace('127.0.0.1', 'hooks.pinned.test');
    const hook = await call('POST', '/v1/webhooks', { url: named, events: ['*'] });
    receiver.verifyWith(hook.body.secret);
    await call('POST', `/v1/webhooks/${hook.body.id}/test`);
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 1,
    );

    const guarded = await startTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE: false, WEBHOOK_POLL_MS: 50 },
      { resolveHost: async () => ['127.0.0.1'] },
    );
    try {
      const { apiKey } = await guarded.newAccount();
      const made = await http(guarded.baseUrl, 'POST', '/v1/webhooks', { key: apiKey, body: { url: named, events: ['*'] } });
      expect(made.status).toBe(201);
      await http(guarded.baseUrl, 'POST', `/v1/webhooks/${made.body.id}/test`, { key: apiKey });
      const log = await waitUntil(
        () => http(guarded.baseUrl, 'GET', `/v1/webhooks/${made.body.id}/deliveries`, { key: apiKey }),
        (r) => r.body[0]?.attempts === 1,
      );
      expect(log.body[0]).toMatchObject({
        status: 'PENDING',
        lastStatus: null,
        attemptLog: [
          {
            statusCode: null,
            error:
              'url must point to a public address (private, loopback and link-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE=true)',
          },
        ],
      });
      expect(receiver.requests).toBe(1);
    } finally {
      await guarded.close();
    }
  });

  it('delivers a test event signed per Standard Webhooks, verified by the standardwebhooks package', async () => {
    const hook = await create({ events: ['message.received'] });
    const sent = await call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(sent.body).toEqual({ ok: true, eventId: expect.stringMatching(/^msg_[0-9a-z]+$/) });
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 1,
    );
    const [got] = receiver.received;
    expect(got?.verified).toBe(true);
    expect(got?.id).toBe(sent.body.eventId);
    expect(got?.payload).toEqual({
      type: 'webhook.test',
      timestamp: expect.stringMatching(/Z$/),
      data: { webhookId: hook.id, message: 'This is a test event' },
    });
    const log = await waitUntil(
      () => call('GET', `/v1/webhooks/${hook.id}/deliveries`),
      (r) => r.body[0]?.status === 'DELIVERED',
    );
    expect(log.body[0]).toMatchObject({
      eventId: sent.body.eventId,
      type: 'webhook.test',
      attempts: 1,
      lastStatus: 204,
      deliveredAt: expect.stringMatching(/^20\d\d-.*Z$/),
      attemptLog: [{ statusCode: 204, error: null, latencyMs: expect.any(Number) }],
    });
  });

  it('an incoming message from a phone and a send through the API reach the receiver with their payloads', async () => {
    await create({ events: ['message.received', 'message.sent'] });
    const phoneSent = await ctx.sandbox.control.sendText(BOB, ME, 'hello hook');
    const send = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'sent hook' });
    expect(send.status).toBe(200);
    await waitUntil(
      async () => receiver.received.length,
      (n) => n >= 2,
    );
    const [incoming] = receivedOf('message.received');
    expect(incoming?.verified).toBe(true);
    expect(incoming?.payload.data).toEqual({
      sessionId,
      chatId: `${BOB}@s.whatsapp.net`,
      chatLid: ctx.sandbox.control.phone(BOB).lid,
      from: `${BOB}@s.whatsapp.net`,
      fromLid: ctx.sandbox.control.phone(BOB).lid,
      fromMe: false,
      type: 'text',
      content: 'hello hook',
      pushName: 'Bob',
      messageTimestamp: expect.any(Number),
      receivedAt: expect.stringMatching(/Z$/),
      waMessageId: phoneSent.id,
    });
    const [sent] = receivedOf('message.sent');
    expect(sent?.verified).toBe(true);
    expect(sent?.payload.data).toMatchObject({
      messageId: send.body.id,
      sessionId,
      to: `${BOB}@s.whatsapp.net`,
      toLid: ctx.sandbox.control.phone(BOB).lid,
      kind: 'text',
      content: 'sent hook',
      status: 'SENT',
      error: null,
    });
    const record = await ctx.app.db.outgoingMessage.findUniqueOrThrow({ where: { id: send.body.id } });
    expect(sent?.payload.data.waMessageId).toBe(record.waMessageId);
  });

  it('writes nothing to the outbox for an account without a matching endpoint', async () => {
    await create({ events: ['session.status'] });
    const before = await ctx.app.db.webhookDelivery.count();
    const send = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'no hook for this' });
    expect(send.status).toBe(200);
    // The phone's delivery receipt is recorded too, without an event (and not later, into the next test's endpoint).
    await waitUntil(
      () => ctx.app.db.outgoingMessage.findUniqueOrThrow({ where: { id: send.body.id } }),
      (r) => r.deliveredAt !== null,
    );
    await ctx.app.deps.outgoing.settled();
    expect(await ctx.app.db.webhookDelivery.count()).toBe(before);
  });

  it('retries a failing receiver with the same webhook-id until it recovers, logging each attempt', async () => {
    const hook = await create({ events: ['*'] });
    receiver.setMode({ kind: 'status', status: 503 });
    const { eventId } = (await call('POST', `/v1/webhooks/${hook.id}/test`)).body;
    await waitUntil(
      async () => receiver.requests,
      (n) => n >= 3,
    );
    const failing = await call('GET', `/v1/webhooks/${hook.id}`);
    expect(failing.body.failingSince).toEqual(expect.stringMatching(/Z$/));
    receiver.setMode({ kind: 'ok' });
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 1,
    );
    expect(receiver.received[0]?.id).toBe(eventId);
    expect(receiver.received[0]?.verified).toBe(true);
    const log = await waitUntil(
      () => call('GET', `/v1/webhooks/${hook.id}/deliveries`),
      (r) => r.body[0]?.status === 'DELIVERED',
    );
    const attempts = log.body[0].attemptLog as Array<{ statusCode: number; responseExcerpt: string }>;
    expect(attempts.length).toBeGreaterThanOrEqual(4);
    expect(attempts[0]).toMatchObject({ statusCode: 503, responseExcerpt: 'failing with 503' });
    expect(attempts.at(-1)).toMatchObject({ statusCode: 204 });
    expect((await call('GET', `/v1/webhooks/${hook.id}`)).body.failingSince).toBeNull();
  });

  it('a receiver that times out is retried like a failing one', async () => {
    const hook = await create({ events: ['*'] });
    receiver.setMode({ kind: 'hang' });
    const { eventId } = (await call('POST', `/v1/webhooks/${hook.id}/test`)).body;
    await waitUntil(
      async () => receiver.requests,
      (n) => n >= 1,
    );
    const log = await waitUntil(
      () => call('GET', `/v1/webhooks/${hook.id}/deliveries`),
      (r) => r.body[0]?.attemptLog.length >= 1,
    );
    expect(log.body[0].attemptLog[0]).toMatchObject({ statusCode: null, error: 'no answer within 1000 ms' });
    receiver.setMode({ kind: 'ok' });
    await waitUntil(
      async () => receiver.received.map((r) => r.id),
      (ids) => ids.includes(eventId),
    );
  });

  it('410 Gone disables the endpoint with a reason shown on GET; replay after re-enabling delivers the same event', async () => {
    const hook = await create({ events: ['*'] });
    receiver.setMode({ kind: 'status', status: 410 });
    const { eventId } = (await call('POST', `/v1/webhooks/${hook.id}/test`)).body;
    const disabled = await waitUntil(
      () => call('GET', `/v1/webhooks/${hook.id}`),
      (r) => r.body.enabled === false,
    );
    expect(disabled.body.disabledReason).toMatch(/^The endpoint answered 410 Gone at /);
    expect(receiver.requests).toBe(1);
    const failed = await call('GET', `/v1/webhooks/${hook.id}/deliveries?status=FAILED`);
    expect(failed.body).toHaveLength(1);
    expect(failed.body[0]).toMatchObject({ eventId, status: 'FAILED', lastError: 'the endpoint answered 410 Gone' });

    receiver.setMode({ kind: 'ok' });
    await call('PATCH', `/v1/webhooks/${hook.id}`, { enabled: true });
    const since = new Date(Date.now() - 60_000).toISOString();
    expect((await call('POST', `/v1/webhooks/${hook.id}/replay`, { since })).body).toEqual({ ok: true, replayed: 1 });
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 1,
    );
    expect(receiver.received[0]?.id).toBe(eventId);

    expect((await call('POST', `/v1/webhooks/${hook.id}/replay`, { eventId })).body).toEqual({ ok: true, replayed: 1 });
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 2,
    );
    expect(receiver.received[1]?.id).toBe(eventId);
    // The log keeps every attempt: the refusal, the success the second replay sent again, and the last success.
    const log = await waitUntil(
      () => call('GET', `/v1/webhooks/${hook.id}/deliveries`),
      (r) => r.body[0]?.status === 'DELIVERED' && r.body[0]?.attempts === 3,
    );
    expect(log.body[0]).toMatchObject({ eventId, type: 'webhook.test', lastStatus: 204, lastError: null });
    expect((log.body[0].attemptLog as Array<{ statusCode: number }>).map((a) => a.statusCode)).toEqual([410, 204, 204]);
    expect((await call('POST', `/v1/webhooks/${hook.id}/replay`, {})).status).toBe(400);
    expect((await call('POST', `/v1/webhooks/${hook.id}/replay`, { eventId: 'msg_nope' })).status).toBe(404);
  });

  it('rotating the secret signs with both the old and the new one for 24 hours', async () => {
    const hook = await create({ events: ['*'] });
    const rotated = await call('POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const until = Date.parse(rotated.body.previousSecretValidUntil) - Date.now();
    expect(until).toBeGreaterThan(23 * 3600_000);
    expect(until).toBeLessThanOrEqual(24 * 3600_000);
    receiver.verifyWith(hook.secret, rotated.body.secret);
    await call('POST', `/v1/webhooks/${hook.id}/test`);
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 1,
    );
    expect(receiver.received[0]?.signature.split(' ')).toHaveLength(2);
    expect(receiver.received[0]?.verified).toBe(true);
  });

  it('a rotation applies to the very next event, also when the endpoint was just used', async () => {
    const hook = await create({ events: ['*'] });
    await call('POST', `/v1/webhooks/${hook.id}/test`);
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 1,
    );
    expect(receiver.received[0]?.signature.split(' ')).toHaveLength(1);
    const rotated = await call('POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    // Verified with the new secret alone: a delivery signed only with the old one fails.
    receiver.verifyWith(rotated.body.secret);
    await call('POST', `/v1/webhooks/${hook.id}/test`);
    await waitUntil(
      async () => receiver.received.length,
      (n) => n === 2,
    );
    expect(receiver.received[1]?.signature.split(' ')).toHaveLength(2);
    expect(receiver.received[1]?.verified).toBe(true);
  });

  it("keeps the order of one session's events for a healthy receiver", async () => {
    await create({ events: ['message.sent'] });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: `n${i}` })).body.id);
    await waitUntil(
      async () => receivedOf('message.sent').length,
      (n) => n === 10,
    );
    expect(receivedOf('message.sent').map((r) => r.payload.data.messageId)).toEqual(ids);
  });

  it('sends session.status for each status change of the session', async () => {
    await create({ events: ['session.status'], sessionId });
    expect((await call('PATCH', `/v1/sessions/${sessionId}/status`, { status: 'PAUSED' })).status).toBe(200);
    await call('POST', `/v1/sessions/${sessionId}/connect`);
    await waitUntil(
      async () => receivedOf('session.status').map((r) => r.payload.data.status),
      (s) => s.includes('CONNECTED'),
    );
    const statuses = receivedOf('session.status').map((r) => r.payload.data);
    expect(statuses[0]).toEqual({ sessionId, sessionName: 'main', status: 'PAUSED', phone: `${ME}@s.whatsapp.net`, lastError: null });
    expect(statuses.at(-1)).toMatchObject({ sessionId, status: 'CONNECTED', phone: `${ME}@s.whatsapp.net` });
    expect(receivedOf('session.status').every((r) => r.verified)).toBe(true);
  });

  it("sends campaign.progress with each campaign message's result, counted with that message", async () => {
    await create({ events: ['campaign.progress', 'message.sent'], sessionId });
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/campaign`, {
      contacts: [{ jid: BOB }, { jid: BOB }, { jid: BOB }],
      template: 'campaign hook',
      delayMs: 0,
    });
    expect(res.status).toBe(200);
    const progress = await waitUntil(
      async () => receivedOf('campaign.progress').map((r) => r.payload.data),
      (p) => p.length === 3,
    );
    const campaignId = res.body.campaignId;
    expect([...progress].sort((a, b) => Number(a.sent) - Number(b.sent))).toEqual([
      { campaignId, sessionId, total: 3, sent: 1, failed: 0, remaining: 2 },
      { campaignId, sessionId, total: 3, sent: 2, failed: 0, remaining: 1 },
      { campaignId, sessionId, total: 3, sent: 3, failed: 0, remaining: 0 },
    ]);
    expect(receivedOf('message.sent')).toHaveLength(3);
  });

  it('bulk sends write one campaign.progress event per contact, with the record change it counts, and deliver them in order', async () => {
    const [carol, dave, nobody] = ['15554440003', '15554440004', '19990004444'];
    ctx.sandbox.control.addPhone(carol, 'Carol');
    ctx.sandbox.control.addPhone(dave, 'Dave');
    await create({ events: ['campaign.progress'], sessionId });
    await call('POST', '/v1/contacts/bulk', {
      contacts: [
        { phone: BOB, name: 'Bob', tags: ['hookbulk'] },
        { phone: carol, name: 'Carol', tags: ['hookbulk'] },
        { phone: dave, name: 'Dave', tags: ['hookbulk'], isBlocked: true },
        { phone: nobody, name: 'Nobody', tags: ['hookbulk'] },
      ],
    });
    const group = await call('POST', '/v1/contacts/groups', { name: 'hook bulk' });
    await call('POST', `/v1/contacts/groups/${group.body.id}/members`, { jids: [BOB, carol, dave, nobody] });
    const sends = [
      { path: `/v1/sessions/${sessionId}/bulk/tag/hookbulk`, progressId: crypto.randomUUID(), message: 'bulk by tag' },
      { path: `/v1/sessions/${sessionId}/bulk/contact-group/${group.body.id}`, progressId: crypto.randomUUID(), message: 'bulk by group' },
    ];
    for (const send of sends) {
      const res = await call('POST', send.path, { message: send.message, progressId: send.progressId });
      expect(res.body).toMatchObject({ ok: true, total: 4, sent: 2, failed: 2 });
    }
    await ctx.app.deps.outgoing.settled();

    for (const { progressId, message } of sends) {
      // In the outbox: one event per contact, in the order of the changes, each counting one more result.
      const events = (await ctx.app.db.webhookDelivery.findMany({ where: { type: 'campaign.progress' }, orderBy: { eventId: 'asc' } }))
        .map((e) => JSON.parse(e.data) as { campaignId: string; sent: number; failed: number; remaining: number; total: number })
        .filter((d) => d.campaignId === progressId);
      expect(events.map((d) => d.sent + d.failed)).toEqual([1, 2, 3, 4]);
      expect(events.every((d) => d.total === 4 && d.remaining === 4 - d.sent - d.failed)).toBe(true);
      // The steps that counted a send are as many as the records that went out, and end at what the records hold.
      const records = await ctx.app.db.outgoingMessage.findMany({ where: { sessionId, content: message } });
      expect(records.map((r) => r.status)).toEqual(['SENT', 'SENT']);
      const sentSteps = events.filter((d, i) => d.sent === (events[i - 1]?.sent ?? 0) + 1);
      expect(sentSteps).toHaveLength(records.length);
      expect(events.at(-1)).toEqual({ campaignId: progressId, sessionId, total: 4, sent: 2, failed: 2, remaining: 0 });

      // At the receiver: the same four, signed, in order.
      const got = await waitUntil(
        async () => receivedOf('campaign.progress').filter((r) => r.payload.data.campaignId === progressId),
        (r) => r.length === 4,
      );
      expect(got.every((r) => r.verified)).toBe(true);
      expect(got.map((r) => r.payload.data)).toEqual(events);
    }
  });

  it('serves the same endpoints over GraphQL', async () => {
    const made = await gql(
      ctx.app.baseUrl,
      ctx.key,
      `mutation($u: String!) { createWebhook(url: $u, events: ["session.status"]) { secret webhook { id events enabled } } }`,
      { u: receiver.url },
    );
    expect(made.data.createWebhook).toMatchObject({
      secret: expect.stringMatching(/^whsec_/),
      webhook: { events: ['session.status'], enabled: true },
    });
    const id = made.data.createWebhook.webhook.id;
    const listed = await gql(ctx.app.baseUrl, ctx.key, `{ webhooks { id url } }`);
    expect(listed.data.webhooks).toEqual([{ id, url: receiver.url }]);
    const bad = await gql(ctx.app.baseUrl, ctx.key, `mutation { createWebhook(url: "nope", events: ["*"]) { secret } }`);
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    const testEvent = await gql(ctx.app.baseUrl, ctx.key, `mutation($id: ID!) { sendTestWebhook(id: $id) }`, { id });
    await waitUntil(
      async () => receiver.received.map((r) => r.id),
      (got) => got.includes(testEvent.data.sendTestWebhook),
    );
    expect((await gql(ctx.app.baseUrl, ctx.key, `mutation($id: ID!) { deleteWebhook(id: $id) }`, { id })).data.deleteWebhook).toBe(true);
  });
});
