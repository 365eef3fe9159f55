import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaignProgress } from '../src/resolvers/scheduling.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15557770001';
const BOB = '15557770002';
const CAROL = '15557770003';
const DAVE = '15557770004';
/** numbers the sandbox's directory does not have: not on WhatsApp */
const NOBODY = '19997770001';
const NOBODY_SCHEDULED = '19997770002';
const NOBODY_CAMPAIGN = '19997770003';
const NOBODY_BUTTONS = '19997770004';
const LATECOMER = '19997770005';
const UNKNOWN_LID = '999997770006@lid';

/** Short, so the test can wait it out: how long a number found absent is believed so. */
const ABSENT_FOR_MS = 3_000;
const REASON = 'contact_not_on_whatsapp';

describe.each(dbKinds)('a recipient not on the network is never reported as sent (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const record = async (id: string) => (await call('GET', `/v1/sessions/${sessionId}/messages/${id}`)).body;
  /** Every text any phone of the sandbox holds (the session's own phone included, which gets copies of its sends). */
  const everyInbox = () => ctx.sandbox.control.phones().flatMap((p) => ctx.sandbox.control.inbox(p.number).map((e) => e.content));
  const texts = (number: string) => ctx.sandbox.control.inbox(number).map((e) => e.content);
  /** Runs `work` with the sandbox's stanza trace on; answers the stanzas the clients sent meanwhile. */
  const traced = async (work: () => Promise<void>): Promise<string[]> => {
    ctx.sandbox.control.setTrace(true);
    try {
      const from = ctx.sandbox.control.trace().length;
      await work();
      return ctx.sandbox.control
        .trace()
        .slice(from)
        .filter((t) => t.direction === 'in')
        .map((t) => t.stanza);
    } finally {
      ctx.sandbox.control.setTrace(false);
    }
  };
  const usyncsFor = (stanzas: string[], number: string) => stanzas.filter((s) => s.includes("xmlns='usync'") && s.includes(number));
  const messageStanzas = (stanzas: string[]) => stanzas.filter((s) => s.startsWith('<message'));
  const failedEvents = () => receiver.received.filter((r) => r.payload.type === 'message.failed').map((r) => r.payload.data);

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, {
      NOT_ON_NETWORK_TTL_MS: ABSENT_FOR_MS,
      WEBHOOK_ALLOW_PRIVATE: true,
      WEBHOOK_POLL_MS: 50,
      WEBHOOK_RETRY_BASE_MS: 100,
    });
    sessionId = await linkSession(ctx, ME);
    for (const n of [BOB, CAROL, DAVE]) ctx.sandbox.control.addPhone(n);
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.failed', 'campaign.progress'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  });
  afterAll(async () => {
    await receiver?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('answers a send to a number not on WhatsApp as usual, sends nothing, and records it FAILED with contact_not_on_whatsapp', async () => {
    let res: Awaited<ReturnType<typeof call>> | undefined;
    const stanzas = await traced(async () => {
      res = await call('POST', `/v1/sessions/${sessionId}/send`, { to: NOBODY, message: 'into the void' });
    });
    expect(res?.status).toBe(200);
    expect(res?.body).toEqual({ ok: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(messageStanzas(stanzas)).toEqual([]);
    // the look-up Baileys makes to find the devices, and nothing else
    expect(usyncsFor(stanzas, NOBODY)).toHaveLength(1);
    expect(await record(res?.body.id)).toMatchObject({
      id: res?.body.id,
      toNumber: `${NOBODY}@s.whatsapp.net`,
      status: 'FAILED',
      error: REASON,
      sentAt: null,
      waMessageId: null,
    });
    const failed = await call('GET', `/v1/sessions/${sessionId}/messages?status=FAILED&to=${NOBODY}@s.whatsapp.net`);
    expect(failed.body.count).toBe(1);
    expect(failed.body.items[0]).toMatchObject({ id: res?.body.id, status: 'FAILED', error: REASON });
    expect((await call('GET', `/v1/sessions/${sessionId}/messages?status=SENT&to=${NOBODY}@s.whatsapp.net`)).body.count).toBe(0);
    const event = await waitUntil(
      async () => failedEvents().find((d) => d.messageId === res?.body.id),
      (found) => found !== undefined,
    );
    expect(event).toMatchObject({ status: 'FAILED', error: REASON, to: `${NOBODY}@s.whatsapp.net` });
    expect(everyInbox()).not.toContain('into the void');

    // Believed absent for a while: the second send asks the network nothing.
    let again: Awaited<ReturnType<typeof call>> | undefined;
    const second = await traced(async () => {
      again = await call('POST', `/v1/sessions/${sessionId}/send`, { to: NOBODY, message: 'still nobody' });
    });
    expect(again?.status).toBe(200);
    expect(usyncsFor(second, NOBODY)).toEqual([]);
    expect(messageStanzas(second)).toEqual([]);
    expect(await record(again?.body.id)).toMatchObject({ status: 'FAILED', error: REASON });
  });

  it('fails an unknown LID the same way, and a button message without a plain-text copy', async () => {
    const byLid = await call('POST', `/v1/sessions/${sessionId}/send`, { to: UNKNOWN_LID, message: 'lid nobody' });
    expect(byLid.status).toBe(200);
    expect(await record(byLid.body.id)).toMatchObject({ status: 'FAILED', error: REASON });

    const before = await ctx.app.db.outgoingMessage.count({ where: { sessionId } });
    const buttons = await call('POST', `/v1/sessions/${sessionId}/send-interactive`, {
      chatId: NOBODY_BUTTONS,
      body: 'pick one',
      buttons: [{ type: 'reply', text: 'Yes' }],
    });
    expect(buttons.status).toBe(200);
    expect(await record(buttons.body.id)).toMatchObject({ status: 'FAILED', error: REASON });
    expect(await ctx.app.db.outgoingMessage.count({ where: { sessionId } })).toBe(before + 1);
    expect(everyInbox().filter((t) => t === 'lid nobody' || t.includes('pick one'))).toEqual([]);
  });

  it('costs a known contact no look-up beyond the one its first send needs anyway', async () => {
    const first = await traced(async () => {
      expect((await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'first to bob' })).status).toBe(200);
    });
    expect(usyncsFor(first, BOB)).toHaveLength(1);
    let second: Awaited<ReturnType<typeof call>> | undefined;
    const next = await traced(async () => {
      second = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message: 'second to bob' });
    });
    expect(second?.status).toBe(200);
    expect(next.filter((s) => s.includes("xmlns='usync'"))).toEqual([]);
    expect(messageStanzas(next)).toHaveLength(1);
    await waitUntil(
      async () => texts(BOB),
      (t) => t.includes('second to bob'),
    );
    expect(texts(BOB)).toEqual(['first to bob', 'second to bob']);
    expect(await record(second?.body.id ?? '')).toMatchObject({ status: 'SENT', error: null });
  });

  it('fails a scheduled message to a number not on WhatsApp when it is due', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, { to: NOBODY_SCHEDULED, message: 'later, nobody' });
    expect(res.status).toBe(200);
    const done = await waitUntil(
      () => record(res.body.messageId),
      (r) => r.status !== 'PENDING',
    );
    expect(done).toMatchObject({ status: 'FAILED', error: REASON, sentAt: null });
    await waitUntil(
      async () => failedEvents().find((d) => d.messageId === res.body.messageId),
      (found) => found !== undefined,
    );
    expect(everyInbox()).not.toContain('later, nobody');
  });

  it('delivers a campaign to the real numbers and counts the one not on WhatsApp as failed', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/campaign`, {
      contacts: [
        { jid: CAROL, name: 'Carol' },
        { jid: NOBODY_CAMPAIGN, name: 'Nobody' },
        { jid: DAVE, name: 'Dave' },
      ],
      template: 'campaign for {name}',
    });
    expect(res.status).toBe(200);
    const { campaignId } = res.body as { campaignId: string };
    await waitUntil(
      () => campaignProgress(ctx.app.deps, campaignId),
      (p) => p.remaining === 0,
    );
    expect(await campaignProgress(ctx.app.deps, campaignId)).toEqual({ campaignId, total: 3, sent: 2, failed: 1, remaining: 0 });
    const rows = await ctx.app.db.outgoingMessage.findMany({ where: { campaignId } });
    expect(Object.fromEntries(rows.map((r) => [r.toNumber, [r.status, r.error]]))).toEqual({
      [`${CAROL}@s.whatsapp.net`]: ['SENT', null],
      [`${NOBODY_CAMPAIGN}@s.whatsapp.net`]: ['FAILED', REASON],
      [`${DAVE}@s.whatsapp.net`]: ['SENT', null],
    });
    for (const [n, name] of [
      [CAROL, 'Carol'],
      [DAVE, 'Dave'],
    ] as const) {
      await waitUntil(
        async () => texts(n),
        (t) => t.includes(`campaign for ${name}`),
      );
    }
    expect(everyInbox()).not.toContain('campaign for Nobody');
    // The last progress event a client receives says the same.
    const progress = await waitUntil(
      async () =>
        receiver.received
          .filter((r) => r.payload.type === 'campaign.progress' && r.payload.data.campaignId === campaignId)
          .map((r) => r.payload.data),
      (events) => events.some((e) => e.remaining === 0),
    );
    expect(progress.find((e) => e.remaining === 0)).toMatchObject({ total: 3, sent: 2, failed: 1 });
  });

  it('delivers to a number that joined the network once its absence is no longer believed', async () => {
    const first = await call('POST', `/v1/sessions/${sessionId}/send`, { to: LATECOMER, message: 'before joining' });
    expect(await record(first.body.id)).toMatchObject({ status: 'FAILED', error: REASON });
    const joinedAt = Date.now();
    ctx.sandbox.control.addPhone(LATECOMER, 'Late');
    // Within the time its absence is believed, the network is not asked again.
    const soon = await call('POST', `/v1/sessions/${sessionId}/send`, { to: LATECOMER, message: 'too soon' });
    expect(await record(soon.body.id)).toMatchObject({ status: 'FAILED', error: REASON });
    await new Promise((r) => setTimeout(r, Math.max(0, joinedAt + ABSENT_FOR_MS + 200 - Date.now())));
    const later = await call('POST', `/v1/sessions/${sessionId}/send`, { to: LATECOMER, message: 'after joining' });
    expect(later.status).toBe(200);
    expect(await record(later.body.id)).toMatchObject({ status: 'SENT', error: null });
    await waitUntil(
      async () => texts(LATECOMER),
      (t) => t.includes('after joining'),
    );
    expect(texts(LATECOMER)).toEqual(['after joining']);
  });
});
