import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15557390001';
const RATED = '15557390002';
const FRIEND = '15557390101';
const PAL = '15557390102';
const NEWCOMERS = ['15557390201', '15557390202'];
const jid = (n: string) => `${n}@s.whatsapp.net`;

// Pacing on, with short figures; the back-off long enough that a paused session is seen paused.
const PACED = {
  SEND_PACING: 'on' as const,
  PACING_INTERVAL_MS: 50,
  PACING_JITTER_MS: 0,
  PACING_PER_CHAT_MS: 50,
  PACING_WARMUP_CAPS: '',
  PACING_BACKOFF_BASE_MS: 3_000,
};

describe.each(dbKinds)('pacing keeps every promise (%s)', (kind) => {
  let ctx: Linked;
  const ids: Record<string, string> = {};
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const texts = (number: string, from: string) =>
    ctx.sandbox.control
      .inbox(number)
      .filter((e) => e.from.startsWith(from) || e.from === ctx.sandbox.control.phone(from).lid)
      .map((e) => e.content);
  const health = async (sessionId: string) => (await call('GET', `/v1/sessions/${sessionId}/health`)).body.health as Json;

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, PACED);
    for (const n of [FRIEND, PAL, ...NEWCOMERS]) ctx.sandbox.control.addPhone(n);
    ids.me = await linkSession(ctx, ME, 'me');
    ids.rated = await linkSession(ctx, RATED, 'rated');
  }, 90_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('scheduled messages to one chat due at the same moment reach the phone in the order they were accepted', async () => {
    const S = `/v1/sessions/${ids.me}`;
    const order = ['a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'b4', 'a5', 'b5', 'a6', 'b6'];
    const sendAt = new Date(Date.now() + 2_000).toISOString();
    for (const message of order) {
      const answer = await call('POST', `${S}/messages/schedule`, { to: FRIEND, message, sendAt });
      expect(answer.status).toBe(200);
    }
    await waitUntil(
      async () => texts(FRIEND, ME),
      (t) => t.length === order.length,
      20_000,
    );
    expect(texts(FRIEND, ME)).toEqual(order);
  }, 40_000);

  it('a send accepted after scheduled messages fell due goes after them in their chat, however late their jobs fire', async () => {
    const S = `/v1/sessions/${ids.me}`;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled: Json[] = [];
    for (const message of ['due 1', 'due 2', 'due 3']) {
      const answer = await call('POST', `${S}/messages/schedule`, { to: PAL, message, sendAt: later });
      expect(answer.status).toBe(200);
      scheduled.push(answer.body);
    }
    // They fell due a second ago, and their jobs are late (a busy process): a send comes first.
    await ctx.app.db.outgoingMessage.updateMany({
      where: { id: { in: scheduled.map((s) => s.messageId) } },
      data: { sendAt: new Date(Date.now() - 1_000) },
    });
    const now = await call('POST', `${S}/send`, { to: PAL, message: 'sent now' });
    expect(now.status).toBe(200);
    // Their jobs fire now, the last first.
    for (const s of [...scheduled].reverse()) await ctx.app.deps.jobs.scheduleMessage(s.jobId, s.messageId, new Date());
    await waitUntil(
      async () => texts(PAL, ME),
      (t) => t.length === 4,
      20_000,
    );
    expect(texts(PAL, ME)).toEqual(['due 1', 'due 2', 'due 3', 'sent now']);
  }, 40_000);

  it('a bulk send whose recipient check is answered rate-overlimit pauses the session and answers with what it queued; they go after the pause', async () => {
    const S = `/v1/sessions/${ids.rated}`;
    for (const [i, n] of NEWCOMERS.entries()) {
      expect((await call('POST', '/v1/contacts', { phone: n, name: `New${i}`, tags: ['rated-check'] })).status).toBe(201);
    }
    expect(await health(ids.rated)).toMatchObject({ state: 'ok', rateAnswers: 0 });
    ctx.sandbox.control.rateLimit(RATED, { usync: 0, windowMs: 60_000 });
    const bulk = await call('POST', `${S}/bulk/tag/rated-check`, { message: 'hello {name}' });
    expect(ctx.sandbox.control.phone(RATED).pushback.refused.usync).toBeGreaterThanOrEqual(1);
    ctx.sandbox.control.rateLimit(RATED, undefined);
    expect(bulk.status).toBe(200);
    expect(bulk.body).toEqual({
      ok: true,
      total: 2,
      sent: 0,
      failed: 0,
      errors: [],
      queued: NEWCOMERS.map((n) => ({ jid: jid(n), messageId: expect.any(String), sendAt: expect.any(String) })),
    });
    const paused = await health(ids.rated);
    expect(paused).toMatchObject({ state: 'paused', reason: 'the network answered rate-overlimit', rateAnswers: 1, queueLength: 2 });
    for (const queued of bulk.body.queued as Json[]) {
      const record = (await call('GET', `${S}/messages/${queued.messageId}`)).body;
      expect(record).toMatchObject({ status: 'PENDING', sendAt: queued.sendAt });
      expect(Date.parse(queued.sendAt)).toBeGreaterThanOrEqual(Date.parse(paused.pausedUntil));
    }
    for (const [i, n] of NEWCOMERS.entries()) {
      await waitUntil(
        async () => texts(n, RATED),
        (t) => t.length === 1,
        20_000,
      );
      expect(texts(n, RATED)).toEqual([`hello New${i}`]);
    }
  }, 40_000);

  it('a number check answered rate-overlimit is a 502 that pauses the session too', async () => {
    const S = `/v1/sessions/${ids.rated}`;
    await waitUntil(
      () => health(ids.rated),
      (h) => h.state === 'ok',
      10_000,
    );
    const before = (await health(ids.rated)).rateAnswers as number;
    ctx.sandbox.control.rateLimit(RATED, { usync: 0, windowMs: 60_000 });
    const check = await call('POST', `${S}/numbers/check`, { numbers: ['15557390299'] });
    ctx.sandbox.control.rateLimit(RATED, undefined);
    expect(check.status).toBe(502);
    expect(check.body.error.code).toBe('NETWORK_ERROR');
    expect(await health(ids.rated)).toMatchObject({ state: 'paused', rateAnswers: before + 1 });
  }, 20_000);
});
