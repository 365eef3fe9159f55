import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runDueMessage } from '../src/resolvers/scheduling.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15557780001';
const BOB = '15557780002';
const MOVED = 'the session moved to another node before the message left';

/**
 * Several nodes: this node wrote a send's PENDING record, then lost the session before the message left.
 * The session's new owner arms every PENDING record of the session when it claims it, so the record is
 * either refused here (and the new owner finds nothing to send) or taken there (and answered as
 * accepted here): never refused to the client and shown on the phone. One node stands for both here:
 * the move is its link going away right after the record is written, the new owner's take is its job's
 * claim of the record.
 */
describe.each(dbKinds)('a send whose session moves to another node before it leaves (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const failedEvents = () => receiver.received.filter((r) => r.payload.type === 'message.failed').map((r) => r.payload.data);

  /** The link goes away once the record is on disk; `take` runs then too (the new owner's claim). */
  const moveAfterRecord = (take?: (id: string) => Promise<void>) => {
    const sessions = ctx.app.deps.sessions;
    const link = sessions.link.bind(sessions);
    let moved = false;
    vi.spyOn(sessions, 'link').mockImplementation((id) => (moved && id === sessionId ? undefined : link(id)));
    const outgoing = ctx.app.deps.outgoing;
    const pending = outgoing.pending.bind(outgoing);
    vi.spyOn(outgoing, 'pending').mockImplementation(async (record) => {
      await pending(record);
      moved = true;
      await take?.(record.id);
    });
  };

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_POLL_MS: 50, WEBHOOK_RETRY_BASE_MS: 100 });
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB);
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.failed'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await receiver?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('nobody took the record: 502 NETWORK_ERROR, recorded FAILED with the reason and announced, and the new owner sends nothing', async () => {
    moveAfterRecord();
    const res = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'refused here' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ ok: false, error: { code: 'NETWORK_ERROR', message: `The network refused the message: ${MOVED}` } });
    vi.restoreAllMocks();
    const row = await ctx.app.db.outgoingMessage.findFirstOrThrow({ where: { sessionId, content: 'refused here' } });
    expect(row).toMatchObject({ status: 'FAILED', error: MOVED, waMessageId: null, claimedAt: null });
    await waitUntil(
      async () => failedEvents(),
      (events) => events.some((e) => e.messageId === row.id),
    );
    expect(failedEvents().filter((e) => e.messageId === row.id)).toEqual([expect.objectContaining({ status: 'FAILED', error: MOVED })]);
    // The new owner's job for the record (armed when it claimed the session) finds it FAILED and sends nothing.
    expect(await runDueMessage(ctx.app.deps, row.id)).toBeNull();
    const after = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'after the refusal' });
    expect(after.status).toBe(200);
    await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).map((e) => e.content),
      (texts) => texts.includes('after the refusal'),
    );
    expect(ctx.sandbox.control.inbox(BOB).map((e) => e.content)).not.toContain('refused here');
  });

  it('the new owner took the record first: answered as accepted, not FAILED, not announced as failed, and not sent from here', async () => {
    const claimedAt = new Date();
    moveAfterRecord(async (id) => {
      await ctx.app.db.outgoingMessage.update({ where: { id }, data: { claimedAt } });
    });
    const res = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'taken there' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    vi.restoreAllMocks();
    const row = await ctx.app.db.outgoingMessage.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row).toMatchObject({ status: 'PENDING', error: null, claimedAt, waMessageId: expect.any(String) });
    const record = await call('GET', `/v1/sessions/${sessionId}/messages/${row.id}`);
    expect(record.body).toMatchObject({ id: row.id, status: 'PENDING', error: null });
    // A later send's failure event would arrive after this one's: none for the taken record.
    moveAfterRecord();
    const marker = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'refused after' });
    expect(marker.status).toBe(502);
    vi.restoreAllMocks();
    const markerRow = await ctx.app.db.outgoingMessage.findFirstOrThrow({ where: { sessionId, content: 'refused after' } });
    await waitUntil(
      async () => failedEvents(),
      (events) => events.some((e) => e.messageId === markerRow.id),
    );
    expect(failedEvents().filter((e) => e.messageId === row.id)).toEqual([]);
    expect(ctx.sandbox.control.inbox(BOB).map((e) => e.content)).not.toContain('taken there');
  });
});

/**
 * A session whose link dropped links again by itself after a pause (here 3 to 6 s, so the test sees it): a send
 * meanwhile is refused with nothing written, and told when to try again, as during a take-over.
 */
describe.each(dbKinds)('a send while the session links again by itself (%s)', (kind) => {
  const PHONE = '15557780011';
  const FRIEND = '15557780012';
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, {}, { backoffBaseMs: 6_000, backoffMaxMs: 6_000 });
    sessionId = await linkSession(ctx, PHONE);
    ctx.sandbox.control.addPhone(FRIEND);
  }, 60_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('answers 409 SESSION_NOT_CONNECTED with Retry-After: 1 and writes nothing; once linked again the same send goes', async () => {
    expect(ctx.sandbox.control.dropDevice(PHONE)).toBe(1);
    const connecting = await call('GET', `/v1/sessions/${sessionId}/status?waitFor=CONNECTING&waitMs=10000`);
    expect(connecting.body.status).toBe('CONNECTING');
    const refused = await call('POST', `/v1/sessions/${sessionId}/send`, { to: FRIEND, message: 'while linking' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      ok: false,
      error: { code: 'SESSION_NOT_CONNECTED', message: 'The session is connecting; try again in a moment' },
    });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await ctx.app.db.outgoingMessage.count({ where: { sessionId } })).toBe(0);
    const connected = await call('GET', `/v1/sessions/${sessionId}/status?waitFor=CONNECTED&waitMs=20000`);
    expect(connected.body.status).toBe('CONNECTED');
    const sent = await call('POST', `/v1/sessions/${sessionId}/send`, { to: FRIEND, message: 'while linking' });
    expect(sent.status).toBe(200);
    await waitUntil(
      async () => ctx.sandbox.control.inbox(FRIEND).map((e) => e.content),
      (texts) => texts.includes('while linking'),
    );
    expect(ctx.sandbox.control.inbox(FRIEND).map((e) => e.content)).toEqual(['while linking']);
  });

  it('a session that is not linking by itself (stopped) answers 409 without Retry-After', async () => {
    expect((await call('POST', `/v1/sessions/${sessionId}/disconnect`)).status).toBe(200);
    const refused = await call('POST', `/v1/sessions/${sessionId}/send`, { to: FRIEND, message: 'while stopped' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({
      code: 'SESSION_NOT_CONNECTED',
      message: 'The session is not connected; connect it (and scan the QR code) first',
    });
    expect(refused.headers.get('retry-after')).toBeNull();
  });
});
