import { proto } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNDECRYPTABLE_REASON } from '../src/runtime/network/baileys-network.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15553340001';
const BOB = '15553340002';

describe.each(dbKinds)('messages a device cannot decrypt are sent again, or end FAILED (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const inboxOf = (number: string) => ctx.sandbox.control.inbox(number);
  const send = async (message: string): Promise<string> => {
    const res = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BOB, message });
    expect(res.status).toBe(200);
    return res.body.id;
  };
  const record = (id: string) => call('GET', `/v1/sessions/${sessionId}/messages/${id}`).then((r) => r.body);

  beforeAll(async () => {
    ctx = await startWithSandbox(kind);
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB, 'Bob');
    await send('hello');
    await waitUntil(
      async () => inboxOf(BOB).map((e) => e.content),
      (texts) => texts.includes('hello'),
    );
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('keeps what went out with the SENT mark, for answering a retry receipt later', async () => {
    const id = await send('kept for retries');
    const row = await waitUntil(
      () => ctx.app.db.outgoingMessage.findUniqueOrThrow({ where: { id } }),
      (r) => r.status === 'SENT',
    );
    const sent = proto.Message.decode(Buffer.from(row.sentMessage ?? '', 'base64'));
    expect(sent.conversation ?? sent.extendedTextMessage?.text).toBe('kept for retries');
  });

  it('delivers once, both ways, after the phone lost its sessions (retry receipts from each end)', async () => {
    ctx.sandbox.control.loseSessions(BOB);
    // The phone has no session for this message: it asks for it again and Baileys sends it on a new one.
    const id = await send('after the loss');
    await waitUntil(
      async () => inboxOf(BOB).map((e) => e.content),
      (texts) => texts.includes('after the loss'),
    );
    // The phone's new session names a prekey the service no longer has: the service asks, the phone sends again.
    await ctx.sandbox.control.sendText(BOB, ME, 'reply after the loss');
    const received: string[] = [];
    await waitUntil(
      async () => {
        const res = await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=500`);
        received.push(...(res.body.items as Array<{ content: string }>).map((i) => i.content));
        return received;
      },
      (texts) => texts.includes('reply after the loss'),
    );
    await ctx.sandbox.control.sendText(BOB, ME, 'and one more');
    await waitUntil(
      async () => {
        const res = await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=500`);
        received.push(...(res.body.items as Array<{ content: string }>).map((i) => i.content));
        return received;
      },
      (texts) => texts.includes('and one more'),
    );
    expect(received.filter((t) => t === 'reply after the loss')).toHaveLength(1);
    expect(inboxOf(BOB).find((e) => e.content === 'after the loss')?.duplicates).toBe(0);
    expect(await record(id)).toMatchObject({ status: 'SENT' });
  });

  it('ends FAILED with the reason when the recipient still cannot decrypt after the resends', async () => {
    ctx.sandbox.control.failDecryption(BOB);
    try {
      const id = await send('never readable');
      const failed = await waitUntil(
        () => record(id),
        (r) => r.status === 'FAILED',
      );
      expect(failed).toMatchObject({ status: 'FAILED', error: UNDECRYPTABLE_REASON });
      expect(inboxOf(BOB).map((e) => e.content)).not.toContain('never readable');
    } finally {
      ctx.sandbox.control.failDecryption(BOB, false);
    }
    const after = await send('readable again');
    await waitUntil(
      async () => inboxOf(BOB).map((e) => e.content),
      (texts) => texts.includes('readable again'),
    );
    expect(await record(after)).toMatchObject({ status: 'SENT' });
  });
});
