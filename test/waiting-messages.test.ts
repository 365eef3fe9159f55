import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, graphqlWs, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15557720001';
const ANN = '15557720002';
const jid = (n: string) => `${n}@s.whatsapp.net`;

const FAST = { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_BASE_MS: 100, WEBHOOK_POLL_MS: 50 };

describe.each(dbKinds)('waiting messages: a message the link cannot decrypt yet, then its resend (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const S = () => `/v1/sessions/${sessionId}`;
  const events = () => receiver.received.map((r) => ({ type: r.payload.type, data: r.payload.data as Json }));

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, FAST);
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(ANN, 'Ann');
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.received', 'message.waiting'], sessionId });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it("raises message.waiting, then the resent message.received refers to it, with the phone's text", async () => {
    const client = graphqlWs(ctx.app.baseUrl, ctx.key);
    const pushed: Json[] = [];
    let ready = false;
    client.on('connected', () => {
      ready = true;
    });
    client.subscribe(
      {
        query: 'subscription($s: ID!) { waitingMessages(sessionId: $s) { sessionId waMessageId chatId from fromLid fromMe at } }',
        variables: { s: sessionId },
      },
      { next: (frame) => pushed.push(frame.data?.waitingMessages), error: () => undefined, complete: () => undefined },
    );
    try {
      await waitUntil(
        async () => ready,
        (r) => r,
      );
      const lid = ctx.sandbox.control.phone(ANN).lid;
      // a readable message first: no waiting, no waitingSince
      const plain = await ctx.sandbox.control.sendText(ANN, ME, 'readable at once');
      await waitUntil(
        async () => events().filter((e) => e.type === 'message.received'),
        (e) => e.some((r) => r.data.waMessageId === plain.id),
      );

      ctx.sandbox.control.undecryptable(ANN);
      const sent = await ctx.sandbox.control.sendText(ANN, ME, 'arrived after a retry');
      const received = await waitUntil(
        async () => events().find((e) => e.type === 'message.received' && e.data.waMessageId === sent.id),
        (e) => e !== undefined,
      );
      const waiting = events().filter((e) => e.type === 'message.waiting');
      expect(waiting).toEqual([
        {
          type: 'message.waiting',
          data: {
            sessionId,
            waMessageId: sent.id,
            chatId: jid(ANN),
            chatLid: lid,
            from: jid(ANN),
            fromLid: lid,
            fromMe: false,
            messageTimestamp: expect.any(Number),
            at: expect.any(String),
          },
        },
      ]);
      // the webhook events in the order they happened: the waiting one before the message it announced
      const order = events()
        .filter((e) => e.data.waMessageId === sent.id)
        .map((e) => e.type);
      expect(order).toEqual(['message.waiting', 'message.received']);
      expect(received?.data).toMatchObject({
        waMessageId: sent.id,
        chatId: jid(ANN),
        from: jid(ANN),
        content: 'arrived after a retry',
        waitingSince: waiting[0]?.data.at,
      });
      // the buffer holds the two messages, not the waiting one; only the resent one carries waitingSince
      const buffered = await call('GET', `${S()}/incoming?limit=10`);
      expect(
        buffered.body.items.map((i: Json) => ({ waMessageId: i.waMessageId, content: i.content, waitingSince: i.waitingSince })),
      ).toEqual([
        { waMessageId: plain.id, content: 'readable at once', waitingSince: undefined },
        { waMessageId: sent.id, content: 'arrived after a retry', waitingSince: waiting[0]?.data.at },
      ]);
      // the subscription saw the same
      await waitUntil(
        async () => pushed.length,
        (n) => n > 0,
      );
      expect(pushed).toEqual([
        { sessionId, waMessageId: sent.id, chatId: jid(ANN), from: jid(ANN), fromLid: lid, fromMe: false, at: waiting[0]?.data.at },
      ]);
      // the phone's message was delivered once: one receipt from the linked device, none waiting
      const delivery = await waitUntil(
        async () => ctx.sandbox.control.delivery(ANN, sent.id),
        (d) => (d?.receipted.length ?? 0) > 0,
      );
      expect(delivery?.waiting).toEqual([]);
    } finally {
      await client.dispose();
    }
  });

  it('does the same in a group, and raises nothing for a group the ignore filter drops', async () => {
    const created = await call('POST', `${S()}/groups`, { subject: 'waiting', participants: [ANN] });
    expect(created.status).toBe(200);
    const groupId: string = created.body.id;

    // ignored: the message waits and is resent, and neither raises anything
    expect((await call('PATCH', `${S()}/settings`, { ignoreGroups: true })).body.settings.ignoreGroups).toBe(true);
    ctx.sandbox.control.undecryptable(ANN);
    const ignored = await ctx.sandbox.control.sendText(ANN, groupId, 'ignored while waiting');
    expect(ignored.delivered).toBe(1);
    // the linked device's delivery receipt comes for the resend it could read
    await waitUntil(
      async () => ctx.sandbox.control.delivery(ANN, ignored.id)?.receipted.length ?? 0,
      (n) => n > 0,
    );
    expect((await call('PATCH', `${S()}/settings`, { ignoreGroups: false })).body.settings.ignoreGroups).toBe(false);

    ctx.sandbox.control.undecryptable(ANN);
    const sent = await ctx.sandbox.control.sendText(ANN, groupId, 'group after a retry');
    const received = await waitUntil(
      async () => events().find((e) => e.type === 'message.received' && e.data.waMessageId === sent.id),
      (e) => e !== undefined,
    );
    const waiting = events().filter((e) => e.type === 'message.waiting' && e.data.chatId === groupId);
    expect(waiting.map((e) => e.data)).toEqual([
      {
        sessionId,
        waMessageId: sent.id,
        chatId: groupId,
        chatLid: null,
        from: jid(ANN),
        fromLid: ctx.sandbox.control.phone(ANN).lid,
        fromMe: false,
        messageTimestamp: expect.any(Number),
        at: expect.any(String),
      },
    ]);
    expect(received?.data).toMatchObject({
      chatId: groupId,
      from: jid(ANN),
      content: 'group after a retry',
      waitingSince: waiting[0]?.data.at,
    });
    expect(events().some((e) => e.data.waMessageId === ignored.id)).toBe(false);
  });
});
