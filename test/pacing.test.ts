import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RESTRICTED_REASON, slotFor } from '../src/resolvers/pacing.ts';
import { runDueMessage } from '../src/resolvers/scheduling.ts';
import { gql, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15558840001';
const RATED = '15558840002';
const LIMITED = '15558840003';
const BANNED = '15558840004';
const PACED_BY_HAND = '15558840005';
const FRIEND = '15558840101';
const PAL = '15558840102';
const STRANGER = '15558840103';
const NEWCOMER = '15558840104';
const jid = (n: string) => `${n}@s.whatsapp.net`;

const METRICS_TOKEN = 'metrics-token-for-pacing-0123456789';

// Pacing on, with short figures so a test sees each effect in seconds.
const PACED = {
  SEND_PACING: 'on' as const,
  PACING_INTERVAL_MS: 400,
  PACING_JITTER_MS: 0,
  PACING_PER_CHAT_MS: 900,
  PACING_WARMUP_CAPS: '',
  PACING_BACKOFF_BASE_MS: 1_500,
  METRICS_TOKEN,
  WEBHOOK_ALLOW_PRIVATE: true,
  WEBHOOK_RETRY_BASE_MS: 100,
  WEBHOOK_POLL_MS: 50,
};

describe('send pacing, queue and back-off (sandbox push-back)', () => {
  let ctx: Linked;
  let receiver: Receiver;
  const ids: Record<string, string> = {};
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const texts = (number: string, from: string) =>
    ctx.sandbox.control
      .inbox(number)
      .filter((e) => e.from.startsWith(from) || e.from === ctx.sandbox.control.phone(from).lid)
      .map((e) => e.content);
  const events = (type: string, sessionId: string) =>
    receiver.received.filter((r) => r.payload.type === type && r.payload.data.sessionId === sessionId).map((r) => r.payload.data as Json);
  const record = async (sessionId: string, id: string) => (await call('GET', `/v1/sessions/${sessionId}/messages/${id}`)).body;

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite', PACED);
    for (const [n, name] of [
      [FRIEND, 'Friend'],
      [PAL, 'Pal'],
      [STRANGER, 'Stranger'],
      [NEWCOMER, 'Newcomer'],
    ] as const)
      ctx.sandbox.control.addPhone(n, name);
    ids.me = await linkSession(ctx, ME, 'me');
    ids.rated = await linkSession(ctx, RATED, 'rated');
    ids.limited = await linkSession(ctx, LIMITED, 'limited');
    ids.banned = await linkSession(ctx, BANNED, 'banned');
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['session.health', 'session.status', 'message.failed'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 90_000);
  afterAll(async () => {
    await receiver?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('answers at once, queues what is not due yet with its time, and sends each chat in order with the spacing asked', async () => {
    const S = `/v1/sessions/${ids.me}`;
    const answers: Json[] = [];
    for (const [to, message] of [
      [FRIEND, 'one'],
      [FRIEND, 'two'],
      [PAL, 'hello pal'],
      [FRIEND, 'three'],
    ])
      answers.push((await call('POST', `${S}/send`, { to, message })).body);
    // the first leaves at once, as without pacing; the others wait for their slot
    expect(answers[0]).toEqual({ ok: true, id: expect.any(String) });
    for (const answer of answers.slice(1))
      expect(answer).toEqual({ ok: true, id: expect.any(String), status: 'PENDING', sendAt: expect.any(String) });
    const queue = await call('GET', `${S}/queue`);
    expect(queue.status).toBe(200);
    expect(queue.body.count).toBe(3);
    expect(queue.body.items.map((m: Json) => m.content)).toEqual(['two', 'hello pal', 'three']);
    expect(queue.body.items.map((m: Json) => m.sendAt)).toEqual(answers.slice(1).map((a) => a.sendAt));
    const times = answers.slice(1).map((a) => Date.parse(a.sendAt));
    // the session's interval between any two slots, the chat's own spacing between two messages to Friend
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(400);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(400);
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(900);
    await waitUntil(
      async () => texts(FRIEND, ME),
      (t) => t.length === 3,
    );
    expect(texts(FRIEND, ME)).toEqual(['one', 'two', 'three']);
    expect(texts(PAL, ME)).toEqual(['hello pal']);
    const friendInbox = ctx.sandbox.control.inbox(FRIEND);
    const arrived = friendInbox.map((e) => Date.parse(e.receivedAt));
    expect(arrived[2] - arrived[1]).toBeGreaterThanOrEqual(850);
    expect(friendInbox.every((e) => e.duplicates === 0)).toBe(true);
    const sent = await waitUntil(
      () => record(ids.me, answers[3].id),
      (r) => r.status === 'SENT',
    );
    // a job that fires late moves its slot later, never earlier
    expect(Date.parse(sent.sendAt)).toBeGreaterThanOrEqual(Date.parse(answers[3].sendAt));
    expect((await call('GET', `${S}/queue`)).body).toEqual({ ok: true, count: 0, items: [] });
  });

  it('shows "typing…" sized to the text before it goes, when the session asks for it', async () => {
    const S = `/v1/sessions/${ids.me}`;
    await call('PATCH', `${S}/settings`, { typingMsPerChar: 40 });
    const text = 'typed by a person'; // 17 characters: 680 ms of typing
    const answer = (await call('POST', `${S}/send`, { to: FRIEND, message: text })).body;
    // typing comes first, so even a due message is queued: the API does not wait for it
    expect(answer).toEqual({ ok: true, id: expect.any(String), status: 'PENDING', sendAt: expect.any(String) });
    const entry = await waitUntil(
      async () => ctx.sandbox.control.inbox(FRIEND).find((e) => e.content === text),
      (e) => e !== undefined,
    );
    const typing = ctx.sandbox.control.typingSeen(FRIEND).filter((t) => t.from === ME);
    const composing = typing.find((t) => t.state === 'composing');
    expect(composing).toBeDefined();
    expect(typing.some((t) => t.state === 'paused')).toBe(true);
    expect(Date.parse(entry?.receivedAt ?? '') - Date.parse(composing?.at ?? '')).toBeGreaterThanOrEqual(680);
    await call('PATCH', `${S}/settings`, { typingMsPerChar: null });
  });

  it('paces a campaign as it falls due: one slot after the other, every message once', async () => {
    const S = `/v1/sessions/${ids.me}`;
    const started = await call('POST', `${S}/messages/campaign`, {
      contacts: [{ jid: jid(FRIEND) }, { jid: jid(PAL) }, { jid: jid(NEWCOMER) }],
      template: 'campaign hello',
    });
    expect(started.status).toBe(200);
    const history = await waitUntil(
      async () => (await call('GET', `${S}/messages?limit=3`)).body.items as Json[],
      (items) => items.length === 3 && items.every((m) => m.content === 'campaign hello' && m.status === 'SENT'),
      20_000,
    );
    expect(history).toHaveLength(3);
    // all three were due at once: the first went, the others were given the session's next slots
    const slots = history.map((m) => Date.parse(m.sendAt)).sort((x, y) => x - y);
    expect(slots[1] - slots[0]).toBeGreaterThanOrEqual(400);
    expect(slots[2] - slots[1]).toBeGreaterThanOrEqual(400);
    for (const n of [FRIEND, PAL, NEWCOMER]) {
      const entries = await waitUntil(
        async () => ctx.sandbox.control.inbox(n).filter((e) => e.content === 'campaign hello'),
        (found) => found.length === 1,
      );
      expect(entries[0]?.duplicates).toBe(0);
    }
  });

  it('gives each paced message the slot it went in: a job that found its slot moved later leaves the next slot after it', async () => {
    // Jobs driven by hand on a clock an hour ahead. The three fall due together and ask for their slots
    // before the first is taken (as jobs firing at once do); the clock moves a millisecond a reading, so
    // the first is taken a little after its slot, and the second, run at its planned slot, finds it later.
    const sessionId = await linkSession(ctx, PACED_BY_HAND, 'by hand');
    const session = await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } });
    let clock = Date.now() + 3_600_000;
    let tick = 1;
    const deps = {
      ...ctx.app.deps,
      now: () => {
        clock += tick;
        return new Date(clock);
      },
    };
    const due = new Date(clock);
    const targets = [FRIEND, PAL, NEWCOMER];
    const rows = targets.map((n, i) => ({
      id: `by-hand-${i}`,
      accountId: session.accountId,
      sessionId,
      toNumber: jid(n),
      content: `by hand ${i}`,
      kind: 'text',
      status: 'PENDING',
      payload: JSON.stringify({ kind: 'text', text: `by hand ${i}` }),
      sendAt: due,
    }));
    await ctx.app.db.outgoingMessage.createMany({ data: rows });
    const planned: number[] = [];
    for (const row of rows) {
      const slot = await slotFor(deps, sessionId, row.toNumber, row.content.length, row.id);
      planned.push(slot?.at ?? 0);
      if (row.id !== rows[0]?.id)
        await ctx.app.db.outgoingMessage.update({ where: { id: row.id }, data: { sendAt: new Date(slot?.at ?? 0) } });
    }
    const [first, second, third] = rows.map((r) => r.id) as [string, string, string];
    expect(await runDueMessage(deps, first)).toBeNull();
    tick = 0;
    clock = planned[1] ?? 0;
    const moved = await runDueMessage(deps, second);
    expect(moved?.getTime()).toBeGreaterThan(clock);
    clock = moved?.getTime() ?? 0;
    expect(await runDueMessage(deps, second)).toBeNull();
    clock = (planned[2] ?? 0) + 50;
    expect(await runDueMessage(deps, third)).toBeNull();
    const sent = await Promise.all(rows.map((r) => record(sessionId, r.id)));
    expect(sent.map((m) => m.status)).toEqual(['SENT', 'SENT', 'SENT']);
    const slots = sent.map((m) => Date.parse(m.sendAt));
    expect(slots[0]).toBeGreaterThanOrEqual(due.getTime());
    expect(slots[1] - slots[0]).toBeGreaterThanOrEqual(400);
    expect(slots[2] - slots[1]).toBeGreaterThanOrEqual(400);
    for (const [i, n] of targets.entries()) {
      const entries = await waitUntil(
        async () => ctx.sandbox.control.inbox(n).filter((e) => e.content === `by hand ${i}`),
        (found) => found.length === 1,
      );
      expect(entries[0]?.duplicates).toBe(0);
    }
  });

  it('takes per-session pacing settings, lists the queue and cancels a queued message (FAILED, never sent); 409 once sent, 404 unknown', async () => {
    const S = `/v1/sessions/${ids.me}`;
    const bad = await call('PATCH', `${S}/settings`, { sendIntervalMs: -1 });
    expect(bad.status).toBe(400);
    // the campaign before this test has taken the session's next slots: let them pass
    await new Promise((r) => setTimeout(r, 1_500));
    const first = (await call('POST', `${S}/send`, { to: PAL, message: 'right away' })).body;
    expect(first).toEqual({ ok: true, id: expect.any(String) });
    // a longer interval counts from the last message that went
    const patched = await call('PATCH', `${S}/settings`, { sendIntervalMs: 60_000, perChatIntervalMs: 0 });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toMatchObject({
      sendIntervalMs: 60_000,
      sendJitterMs: null,
      perChatIntervalMs: 0,
      typingMsPerChar: null,
      warmup: null,
    });
    const waiting = (await call('POST', `${S}/send`, { to: PAL, message: 'never' })).body;
    expect(waiting.status).toBe('PENDING');
    expect(Date.parse(waiting.sendAt) - Date.now()).toBeGreaterThan(50_000);
    const graph = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'query($s: ID!) { session(id: $s) { queue(first: 5) { totalCount edges { node { id content status sendAt } } } health { state queueLength } } }',
      { s: ids.me },
    );
    expect(graph.data?.session).toEqual({
      queue: { totalCount: 1, edges: [{ node: { id: waiting.id, content: 'never', status: 'PENDING', sendAt: waiting.sendAt } }] },
      health: { state: 'ok', queueLength: 1 },
    });
    const cancelled = await call('DELETE', `${S}/queue/${waiting.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.message).toMatchObject({ id: waiting.id, status: 'FAILED', error: 'cancelled by the client before it was sent' });
    expect((await call('DELETE', `${S}/queue/${waiting.id}`)).status).toBe(409);
    await waitUntil(
      () => record(ids.me, first.id),
      (r) => r.status === 'SENT',
    );
    expect((await call('DELETE', `${S}/queue/${first.id}`)).status).toBe(409);
    expect((await call('DELETE', `${S}/queue/no-such-message`)).status).toBe(404);
    // SENT is the server's acknowledgement; the phone decrypts a moment later.
    expect(
      await waitUntil(
        async () => texts(PAL, ME),
        (t) => t.length >= 3,
      ),
    ).toEqual(['hello pal', 'campaign hello', 'right away']);
    // back to the defaults (null): the account's, then the process's
    const reset = await call('PATCH', `${S}/settings`, { sendIntervalMs: null, perChatIntervalMs: null });
    expect(reset.body.settings).toMatchObject({ sendIntervalMs: null, perChatIntervalMs: null });
    expect((await call('PATCH', '/v1/accounts/me/settings', { sendIntervalMs: 'slow' })).status).toBe(400);
    expect((await call('PATCH', '/v1/accounts/me/settings', { nope: 1 })).status).toBe(400);
    const account = await call('PATCH', '/v1/accounts/me/settings', { sendIntervalMs: 45_000 });
    expect(account.body).toEqual({
      ok: true,
      settings: {
        sendIntervalMs: 45_000,
        sendJitterMs: null,
        perChatIntervalMs: null,
        typingMsPerChar: null,
        warmup: null,
        messageRetentionDays: null,
        messageStore: 'all',
      },
    });
    expect((await call('GET', '/v1/accounts/me/settings')).body).toEqual(account.body);
    const byAccount = (await call('POST', `${S}/send`, { to: FRIEND, message: 'account paced' })).body;
    expect(byAccount.status).toBe('PENDING');
    expect(Date.parse(byAccount.sendAt) - Date.now()).toBeGreaterThan(30_000);
    expect((await call('DELETE', `${S}/queue/${byAccount.id}`)).status).toBe(200);
    const cleared = await call('PATCH', '/v1/accounts/me/settings', { sendIntervalMs: null });
    expect(cleared.body.settings.sendIntervalMs).toBeNull();
  });

  it('pauses a session the network answers rate-overlimit, with a session.health event, and sends everything once after the pause, in order', async () => {
    const S = `/v1/sessions/${ids.rated}`;
    const metrics = () =>
      fetch(`${ctx.app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
    const gauge = (text: string, name: string) => Number(text.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1] ?? Number.NaN);
    // One chat, 600 ms apart: the third message meets the network's rate (2 in 1.5 s) while the fourth waits.
    await call('PATCH', `${S}/settings`, { sendIntervalMs: 0, perChatIntervalMs: 600 });
    ctx.sandbox.control.rateLimit(RATED, { messages: 2, windowMs: 1_500 });
    const wanted = ['r1', 'r2', 'r3', 'r4'];
    const answers: Json[] = [];
    for (const message of wanted) answers.push((await call('POST', `${S}/send`, { to: FRIEND, message })).body);
    // while paused: the gauges show the paused session and its waiting messages (the refused one and the one after it)
    const during = await waitUntil(
      metrics,
      (text) => gauge(text, 'wa_sessions_send_paused') === 1 && gauge(text, 'wa_send_queue_waiting') >= 2,
      5_000,
    );
    expect(gauge(during, 'wa_send_queue_waiting')).toBe(2);
    const paused = await waitUntil(
      async () => events('session.health', ids.rated),
      (e) => e.some((h) => h.state === 'paused'),
    );
    const pause = paused.find((h) => h.state === 'paused');
    expect(pause).toMatchObject({
      state: 'paused',
      reason: expect.stringContaining('rate'),
      pausedUntil: expect.any(String),
    });
    const health = await call('GET', `${S}/health`);
    expect(health.status).toBe(200);
    expect(health.body.health.rateAnswers).toBeGreaterThanOrEqual(1);
    await waitUntil(
      async () => texts(FRIEND, RATED),
      (t) => t.length === wanted.length,
      30_000,
    );
    // the refused message keeps its place in the chat: the phone got them in the order they were sent
    expect(texts(FRIEND, RATED)).toEqual(wanted);
    const inbox = ctx.sandbox.control.inbox(FRIEND).filter((e) => wanted.includes(e.content));
    expect(inbox.every((e) => e.duplicates === 0)).toBe(true);
    // and nothing reached the phone while the session was paused
    const arrived = inbox.map((e) => Date.parse(e.receivedAt));
    const [from, until] = [Date.parse(pause.at), Date.parse(pause.pausedUntil)];
    expect(arrived.filter((t) => t >= from && t < until)).toEqual([]);
    expect(arrived.filter((t) => t >= until)).toHaveLength(2);
    for (const answer of answers) {
      const done = await waitUntil(
        () => record(ids.rated, answer.id),
        (r) => r.status === 'SENT',
      );
      expect(done.error).toBeNull();
    }
    expect(ctx.sandbox.control.phone(RATED).pushback.refused.messages).toBe(1);
    // and back to normal once the pause is over, with an event saying so
    const resumed = await waitUntil(
      async () => events('session.health', ids.rated),
      (e) => e.at(-1)?.state === 'ok',
    );
    expect(resumed.at(-1)).toMatchObject({ state: 'ok', reason: null, pausedUntil: null });
    const after = await metrics();
    expect(after).toMatch(/wa_rate_answers_total [1-9]/);
    expect(gauge(after, 'wa_sessions_send_paused')).toBe(0);
    ctx.sandbox.control.rateLimit(RATED, undefined);
    await call('PATCH', `${S}/settings`, { perChatIntervalMs: 0 });
  }, 60_000);

  it('a device look-up refused for the rate (usync 429) puts the message back in the queue; it goes once the pause is over', async () => {
    const S = `/v1/sessions/${ids.rated}`;
    await waitUntil(
      () => call('GET', `${S}/health`),
      (r) => r.body.health.state === 'ok',
      10_000,
    );
    const before = receiver.received.length;
    ctx.sandbox.control.rateLimit(RATED, { usync: 0, windowMs: 60_000 });
    // Newcomer is new to this session: sending needs its device list, a usync query
    const answer = await call('POST', `${S}/send`, { to: NEWCOMER, message: 'first words' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, id: expect.any(String), status: 'PENDING', sendAt: expect.any(String) });
    expect(ctx.sandbox.control.phone(RATED).pushback.refused.usync).toBeGreaterThanOrEqual(1);
    const paused = await waitUntil(
      async () =>
        receiver.received.slice(before).filter((r) => r.payload.type === 'session.health' && r.payload.data.sessionId === ids.rated),
      (e) => e.length > 0,
    );
    expect(paused[0].payload.data).toMatchObject({ state: 'paused', queueLength: 1 });
    ctx.sandbox.control.rateLimit(RATED, undefined);
    const sent = await waitUntil(
      () => record(ids.rated, answer.body.id),
      (r) => r.status === 'SENT',
      20_000,
    );
    expect(sent.sendAt).not.toBeNull();
    expect(
      await waitUntil(
        async () => texts(NEWCOMER, RATED),
        (t) => t.length >= 1,
      ),
    ).toEqual(['first words']);
  }, 40_000);

  it('a bulk send lists a message refused for the rate (usync 429) as queued with its time, not as sent; it goes after the pause', async () => {
    const S = `/v1/sessions/${ids.rated}`;
    await waitUntil(
      () => call('GET', `${S}/health`),
      (r) => r.body.health.state === 'ok',
      10_000,
    );
    // Pal wrote first, so the session knows Pal is on the network; sending still asks for Pal's devices
    await ctx.sandbox.control.sendText(PAL, RATED, 'hi rated');
    await waitUntil(
      async () => (await call('GET', `${S}/incoming?consume=false`)).body.items as Json[],
      (items) => items.some((m) => m.content === 'hi rated'),
    );
    expect((await call('POST', '/v1/contacts', { phone: PAL, name: 'Pal', tags: ['rated-bulk'] })).status).toBe(201);
    ctx.sandbox.control.rateLimit(RATED, { usync: 0, windowMs: 60_000 });
    const bulk = await call('POST', `${S}/bulk/tag/rated-bulk`, { message: 'bulk hello {name}' });
    ctx.sandbox.control.rateLimit(RATED, undefined);
    expect(bulk.status).toBe(200);
    expect(bulk.body).toEqual({
      ok: true,
      total: 1,
      sent: 0,
      failed: 0,
      errors: [],
      queued: [{ jid: jid(PAL), messageId: expect.any(String), sendAt: expect.any(String) }],
    });
    const { messageId, sendAt } = bulk.body.queued[0];
    expect(await record(ids.rated, messageId)).toMatchObject({ status: 'PENDING', sendAt });
    await waitUntil(
      () => record(ids.rated, messageId),
      (r) => r.status === 'SENT',
      20_000,
    );
    const got = await waitUntil(
      async () => ctx.sandbox.control.inbox(PAL).filter((e) => e.content === 'bulk hello Pal'),
      (found) => found.length === 1,
    );
    expect(got[0]?.duplicates).toBe(0);
    expect(Date.parse(got[0]?.receivedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(sendAt));
  }, 40_000);

  it('marks a restricted number: the new chat FAILED with the reason, lastError and session.health say so, the queue ends, existing chats go on', async () => {
    const S = `/v1/sessions/${ids.limited}`;
    // an existing chat: Friend wrote first
    await ctx.sandbox.control.sendText(FRIEND, LIMITED, 'hi limited');
    await call('PATCH', `${S}/settings`, { sendIntervalMs: 0, perChatIntervalMs: 0 });
    const later = await call('POST', `${S}/messages/schedule`, { to: FRIEND, message: 'scheduled', delayMs: 60_000 });
    expect(later.status).toBe(200);
    ctx.sandbox.control.restrict(LIMITED);
    const refused = (await call('POST', `${S}/send`, { to: STRANGER, message: 'cold message' })).body;
    const failed = await waitUntil(
      () => record(ids.limited, refused.id),
      (r) => r.status === 'FAILED',
    );
    expect(failed.error).toBe(RESTRICTED_REASON);
    const health = await waitUntil(
      async () => events('session.health', ids.limited),
      (e) => e.some((h) => h.state === 'restricted'),
    );
    expect(health.find((h) => h.state === 'restricted')).toMatchObject({ reason: RESTRICTED_REASON, queueLength: 0 });
    const status = await call('GET', `${S}/status`);
    expect(status.body).toMatchObject({ status: 'CONNECTED', lastError: RESTRICTED_REASON });
    expect(events('session.status', ids.limited).some((e) => e.lastError === RESTRICTED_REASON)).toBe(true);
    expect(await record(ids.limited, later.body.messageId)).toMatchObject({ status: 'FAILED', error: RESTRICTED_REASON });
    // the chat with earlier messages still works
    const warm = (await call('POST', `${S}/send`, { to: FRIEND, message: 'still here' })).body;
    await waitUntil(
      () => record(ids.limited, warm.id),
      (r) => r.status === 'SENT',
    );
    await waitUntil(
      async () => texts(FRIEND, LIMITED),
      (t) => t.includes('still here'),
    );
    expect(ctx.sandbox.control.inbox(STRANGER).some((e) => e.content === 'cold message')).toBe(false);
    expect(texts(FRIEND, LIMITED)).not.toContain('scheduled');
    ctx.sandbox.control.liftRestriction(LIMITED);
  }, 60_000);

  it('a banned number: DISCONNECTED with the reason, its queue FAILED, credentials kept; linked again once the ban ends', async () => {
    const S = `/v1/sessions/${ids.banned}`;
    const later = await call('POST', `${S}/messages/schedule`, { to: FRIEND, message: 'after the ban', delayMs: 60_000 });
    expect(later.status).toBe(200);
    // a paced message due 4 s after the one before it, still waiting when the ban comes
    await call('PATCH', `${S}/settings`, { sendIntervalMs: 4_000, perChatIntervalMs: 0 });
    const before = (await call('POST', `${S}/send`, { to: FRIEND, message: 'before the ban' })).body;
    expect(before).toEqual({ ok: true, id: expect.any(String) });
    const queued = (await call('POST', `${S}/send`, { to: FRIEND, message: 'queued at the ban' })).body;
    expect(queued.status).toBe('PENDING');
    await waitUntil(
      async () => texts(FRIEND, BANNED),
      (t) => t.includes('before the ban'),
    );
    const client = createClient({
      url: `${ctx.app.baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': ctx.key },
    });
    const seen: Json[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      client.subscribe(
        { query: `subscription($s: ID!) { sessionHealth(sessionId: $s) { state reason queueLength } }`, variables: { s: ids.banned } },
        {
          next: (value) => {
            seen.push(value.data?.sessionHealth as Json);
            if ((value.data?.sessionHealth as Json | undefined)?.state === 'banned') resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    await new Promise((r) => setTimeout(r, 300));
    ctx.sandbox.control.ban(BANNED);
    const status = await waitUntil(
      () => call('GET', `${S}/status`),
      (r) => r.body.status === 'DISCONNECTED' && typeof r.body.lastError === 'string' && r.body.lastError.includes('banned'),
      20_000,
    );
    expect(status.body.lastError).toMatch(/^The network banned this number \(failure 403\)/);
    await ended;
    expect(seen.at(-1)).toEqual({ state: 'banned', reason: status.body.lastError, queueLength: 0 });
    await client.dispose();
    expect(await record(ids.banned, later.body.messageId)).toMatchObject({ status: 'FAILED', error: status.body.lastError });
    expect(await record(ids.banned, queued.id)).toMatchObject({ status: 'FAILED', error: status.body.lastError });
    // the session.status webhook says so
    const statusEvents = await waitUntil(
      async () => events('session.status', ids.banned),
      (e) => e.some((s) => s.status === 'DISCONNECTED'),
    );
    expect(statusEvents.find((e) => e.status === 'DISCONNECTED')).toMatchObject({
      sessionId: ids.banned,
      status: 'DISCONNECTED',
      lastError: status.body.lastError,
    });
    // nothing reached the phone after the ban, the queued message's slot past included
    const slotPassed = Date.parse(queued.sendAt) + 500 - Date.now();
    if (slotPassed > 0) await new Promise((r) => setTimeout(r, slotPassed));
    expect(texts(FRIEND, BANNED)).toEqual(['before the ban']);
    // the device stays registered: once unbanned, connect links again without a QR
    ctx.sandbox.control.unban(BANNED);
    expect((await call('POST', `${S}/connect`)).status).toBe(200);
    await waitUntil(
      () => call('GET', `${S}/status`),
      (r) => r.body.status === 'CONNECTED',
      20_000,
    );
    expect((await call('GET', `${S}/health`)).body.health).toMatchObject({ state: 'ok', reason: null });
  }, 60_000);
});
