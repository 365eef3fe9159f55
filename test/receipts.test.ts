import { randomBytes } from 'node:crypto';
import { http as mswHttp, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, gql, http } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15554550001';
const BOB = '15554550002';
const [A, B, C] = ['15554550003', '15554550004', '15554550005'];
const jid = (n: string) => `${n}@s.whatsapp.net`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const voice = randomBytes(1024);
const files = setupServer(
  mswHttp.get('https://files.example.com/note.ogg', () =>
    HttpResponse.arrayBuffer(voice.buffer.slice(voice.byteOffset, voice.byteOffset + voice.length), {
      headers: { 'content-type': 'audio/ogg' },
    }),
  ),
);

describe.each(dbKinds)('delivery, read and played receipts end to end (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  /** the LID the network gave the phone: records, receipts and events carry it beside the number */
  const lid = (n: string) => ctx.sandbox.control.phone(n).lid;
  const call = (method: string, path: string, body?: unknown, key = ctx.key) => http(ctx.app.baseUrl, method, path, { key, body });
  const record = (id: string) => call('GET', `/v1/sessions/${sessionId}/messages/${id}`);
  const receipts = (id: string) => call('GET', `/v1/sessions/${sessionId}/messages/${id}/receipts`);
  const eventsFor = (id: string, type: string) =>
    receiver.received.filter((r) => r.verified && r.payload.type === type && r.payload.data.messageId === id);
  const sendText = async (to: string, message: string) => {
    const res = await call('POST', `/v1/sessions/${sessionId}/send`, { to, message });
    expect(res.status).toBe(200);
    const id: string = res.body.id;
    const sent = await waitUntil(
      () => record(id),
      (r) => r.body.status === 'SENT',
    );
    return { id, waMessageId: sent.body.waMessageId as string };
  };

  beforeAll(async () => {
    files.listen({ onUnhandledRequest: 'bypass' });
    ctx = await startWithSandbox(kind, { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_POLL_MS: 50 });
    sessionId = await linkSession(ctx, ME);
    for (const [n, name] of [
      [BOB, 'Bob'],
      [A, 'Ann'],
      [B, 'Ben'],
      [C, 'Cy'],
    ]) {
      ctx.sandbox.control.addPhone(n ?? '', name);
    }
    receiver = await startReceiver();
    const endpoint = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.delivered', 'message.read'] });
    expect(endpoint.status).toBe(201);
    receiver.verifyWith(endpoint.body.secret);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
    await receiver?.close();
    files.close();
  });

  it('a text the phone decrypted is delivered; read on the phone, it is read: REST, GraphQL and webhooks say so', async () => {
    const { id, waMessageId } = await sendText(BOB, 'did it arrive?');
    const delivered = await waitUntil(
      () => record(id),
      (r) => r.body.deliveredAt !== null,
    );
    expect(ctx.sandbox.control.inbox(BOB).map((e) => e.id)).toContain(waMessageId);
    expect(delivered.body).toMatchObject({ status: 'SENT', deliveredAt: expect.stringMatching(ISO), readAt: null, playedAt: null });

    expect(ctx.sandbox.control.read(BOB, { ids: [waMessageId] }).receipts).toBe(1);
    const read = await waitUntil(
      () => record(id),
      (r) => r.body.readAt !== null,
    );
    expect(read.body).toEqual({
      id,
      sessionId,
      toNumber: jid(BOB),
      toLid: lid(BOB),
      content: 'did it arrive?',
      status: 'SENT',
      sentAt: expect.stringMatching(ISO),
      createdAt: expect.stringMatching(ISO),
      waMessageId,
      remoteJid: jid(BOB),
      error: null,
      deliveredAt: delivered.body.deliveredAt,
      readAt: expect.stringMatching(ISO),
      playedAt: null,
      deletedAt: null,
      sendAt: null,
    });
    expect((await call('GET', `/v1/sessions/${sessionId}/messages?limit=5`)).body.items.find((m: { id: string }) => m.id === id)).toEqual(
      read.body,
    );
    expect((await receipts(id)).body).toEqual({
      messageId: id,
      count: 1,
      items: [
        { recipient: jid(BOB), recipientLid: lid(BOB), deliveredAt: read.body.deliveredAt, readAt: read.body.readAt, playedAt: null },
      ],
    });
    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'query($s: ID!, $id: ID!) { message(sessionId: $s, id: $id) { status deliveredAt readAt playedAt receipts { recipient deliveredAt readAt } } }',
      { s: sessionId, id },
    );
    expect(q.data).toEqual({
      message: {
        status: 'SENT',
        deliveredAt: read.body.deliveredAt,
        readAt: read.body.readAt,
        playedAt: null,
        receipts: [{ recipient: jid(BOB), deliveredAt: read.body.deliveredAt, readAt: read.body.readAt }],
      },
    });

    await waitUntil(
      async () => eventsFor(id, 'message.read').length,
      (n) => n === 1,
    );
    expect(eventsFor(id, 'message.delivered').map((r) => r.payload.data)).toEqual([
      { messageId: id, sessionId, waMessageId, to: jid(BOB), recipient: jid(BOB), recipientLid: lid(BOB), at: read.body.deliveredAt },
    ]);
    expect(eventsFor(id, 'message.read').map((r) => r.payload.data)).toEqual([
      {
        messageId: id,
        sessionId,
        waMessageId,
        to: jid(BOB),
        recipient: jid(BOB),
        recipientLid: lid(BOB),
        at: read.body.readAt,
        played: false,
      },
    ]);
  });

  it('a repeated receipt changes nothing and raises no second event', async () => {
    const first = await sendText(BOB, 'read me twice');
    await waitUntil(
      () => record(first.id),
      (r) => r.body.deliveredAt !== null,
    );
    ctx.sandbox.control.read(BOB, { ids: [first.waMessageId] });
    const once = await waitUntil(
      () => record(first.id),
      (r) => r.body.readAt !== null,
    );
    await waitUntil(
      async () => eventsFor(first.id, 'message.read').length,
      (n) => n === 1,
    );
    const second = await sendText(BOB, 'and me');
    await waitUntil(
      () => record(second.id),
      (r) => r.body.deliveredAt !== null,
    );
    // One receipt names both: the first again, then the second; once the second is read, the first's repeat was handled.
    ctx.sandbox.control.read(BOB, { ids: [first.waMessageId, second.waMessageId] });
    await waitUntil(
      () => record(second.id),
      (r) => r.body.readAt !== null,
    );
    await waitUntil(
      async () => eventsFor(second.id, 'message.read').length,
      (n) => n === 1,
    );
    expect((await record(first.id)).body).toEqual(once.body);
    expect(eventsFor(first.id, 'message.read')).toHaveLength(1);
    expect(eventsFor(first.id, 'message.delivered')).toHaveLength(1);
  });

  it('a voice note played on the phone gets playedAt (and is read by then)', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/send-media`, {
      to: BOB,
      mediaType: 'audio',
      url: 'https://files.example.com/note.ogg',
      ptt: true,
    });
    expect(res.status).toBe(200);
    const id: string = res.body.id;
    const delivered = await waitUntil(
      () => record(id),
      (r) => r.body.deliveredAt !== null,
    );
    expect(delivered.body.playedAt).toBeNull();
    expect(ctx.sandbox.control.inbox(BOB).find((e) => e.id === delivered.body.waMessageId)?.kind).toBe('voice');
    ctx.sandbox.control.play(BOB, [delivered.body.waMessageId]);
    const played = await waitUntil(
      () => record(id),
      (r) => r.body.playedAt !== null,
    );
    expect(played.body).toMatchObject({
      deliveredAt: delivered.body.deliveredAt,
      readAt: played.body.playedAt,
      playedAt: expect.stringMatching(ISO),
    });
    await waitUntil(
      async () => eventsFor(id, 'message.read').length,
      (n) => n === 1,
    );
    expect(eventsFor(id, 'message.read')[0]?.payload.data).toMatchObject({ played: true, at: played.body.readAt });
  });

  it('a group message lists each member with its delivery, and the read of the one who read it', async () => {
    const group = await call('POST', `/v1/sessions/${sessionId}/groups`, { subject: 'Receipts', participants: [A, B, C] });
    expect(group.status).toBe(200);
    const groupId: string = group.body.id;
    const sent = await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/send`, { message: 'hello members' });
    expect(sent.status).toBe(200);
    const id: string = sent.body.id;
    const all = await waitUntil(
      () => receipts(id),
      (r) => r.body.count === 3,
    );
    expect(all.body.items.map((r: { recipient: string }) => r.recipient).sort()).toEqual([jid(A), jid(B), jid(C)]);
    for (const item of all.body.items)
      expect(item).toMatchObject({ deliveredAt: expect.stringMatching(ISO), readAt: null, playedAt: null });
    const { waMessageId } = (await record(id)).body;
    ctx.sandbox.control.read(B, { chat: groupId });
    const afterRead = await waitUntil(
      () => receipts(id),
      (r) => r.body.items.some((i: { readAt: string | null }) => i.readAt !== null),
    );
    const byRecipient = Object.fromEntries(afterRead.body.items.map((i: { recipient: string }) => [i.recipient, i]));
    expect(byRecipient[jid(B)]).toMatchObject({ readAt: expect.stringMatching(ISO) });
    expect(byRecipient[jid(A)]).toMatchObject({ readAt: null });
    expect(byRecipient[jid(C)]).toMatchObject({ readAt: null });
    expect((await record(id)).body).toMatchObject({
      waMessageId,
      deliveredAt: expect.stringMatching(ISO),
      readAt: byRecipient[jid(B)].readAt,
    });

    const q = await gql(
      ctx.app.baseUrl,
      ctx.key,
      'query($s: ID!, $id: ID!) { message(sessionId: $s, id: $id) { receipts { recipient readAt } } }',
      { s: sessionId, id },
    );
    expect(q.data.message.receipts.find((r: { recipient: string }) => r.recipient === jid(B))).toEqual({
      recipient: jid(B),
      readAt: byRecipient[jid(B)].readAt,
    });
    await waitUntil(
      async () => eventsFor(id, 'message.delivered').length,
      (n) => n === 3,
    );
    expect(
      eventsFor(id, 'message.delivered')
        .map((r) => r.payload.data.recipient)
        .sort(),
    ).toEqual([jid(A), jid(B), jid(C)]);
    await waitUntil(
      async () => eventsFor(id, 'message.read').map((r) => r.payload.data.recipient),
      (r) => r.length === 1 && r[0] === jid(B),
    );
    expect(await ctx.app.db.messageReceipt.count({ where: { messageId: id } })).toBe(3);
  });

  it('answers 404 for an unknown session or message, and for another account', async () => {
    const { id } = await sendText(BOB, 'mine');
    const unknownSession = await call('GET', `/v1/sessions/nope/messages/${id}/receipts`);
    expect(unknownSession.status).toBe(404);
    expect(unknownSession.body).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'Session not found' } });
    const unknownMessage = await call('GET', `/v1/sessions/${sessionId}/messages/nope/receipts`);
    expect(unknownMessage.status).toBe(404);
    expect(unknownMessage.body).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'Message not found' } });
    const other = await ctx.app.newAccount();
    expect((await call('GET', `/v1/sessions/${sessionId}/messages/${id}/receipts`, undefined, other.apiKey)).status).toBe(404);
  });
});
