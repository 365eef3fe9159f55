import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15554460001';
const BOB = '15554460002';
const CAROL = '15554460003';
const jid = (n: string) => `${n}@s.whatsapp.net`;
const AT = expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/);

// What a user testing their own integration reads: the phone's inbox over the control API's HTTP, not
// the sandbox's objects in this process.
describe.each(dbKinds)('the sandbox inbox over HTTP shows what a reply, a reaction and a delete point at (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const inbox = async (number: string): Promise<Json[]> => {
    const res = await http(ctx.sandbox.controlUrl, 'GET', `/phones/${number}/inbox`);
    expect(res.status).toBe(200);
    return res.body as Json[];
  };
  const entry = async (number: string, id: string): Promise<Json> =>
    (await waitUntil(
      async () => (await inbox(number)).find((e) => e.id === id),
      (e) => e !== undefined,
    )) as Json;
  const S = () => `/v1/sessions/${sessionId}`;
  const sent = async (res: { status: number; body: Json }): Promise<Json> => {
    expect(res.status).toBe(200);
    return (
      await waitUntil(
        () => call('GET', `${S()}/messages/${res.body.id}`),
        (r) => r.body.status === 'SENT',
      )
    ).body as Json;
  };

  beforeAll(async () => {
    ctx = await startWithSandbox(kind);
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(BOB, 'Bob');
    ctx.sandbox.control.addPhone(CAROL, 'Carol');
  }, 60_000);
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('gives a reply its quoted id and participant and mentions, a reaction its target, a delete its key', async () => {
    const original = await sent(await call('POST', `${S()}/send`, { to: BOB, message: 'the plan' }));
    const reply = await sent(
      await call('POST', `${S()}/send`, { to: BOB, message: `ask @${CAROL}`, quotedMessageId: original.id, mentions: [CAROL] }),
    );
    expect(await entry(BOB, reply.waMessageId)).toEqual({
      id: reply.waMessageId,
      from: jid(ME),
      chat: jid(ME),
      kind: 'text',
      content: `ask @${CAROL}`,
      quoted: { id: original.waMessageId, participant: jid(ME) },
      mentions: [jid(CAROL)],
      receivedAt: AT,
      duplicates: 0,
    });

    const reacted = await call('POST', `${S()}/messages/${original.id}/react`, { emoji: '👍' });
    expect(reacted.status).toBe(200);
    expect(await entry(BOB, reacted.body.waMessageId)).toEqual({
      id: reacted.body.waMessageId,
      from: jid(ME),
      chat: jid(ME),
      kind: 'reaction',
      content: '👍',
      target: { id: original.waMessageId, remoteJid: jid(BOB), fromMe: true, participant: null },
      receivedAt: AT,
      duplicates: 0,
    });

    const deleted = await call('POST', `${S()}/messages/${original.id}/delete`);
    expect(deleted.status).toBe(200);
    const revoke = await waitUntil(
      async () => (await inbox(BOB)).find((e) => e.kind === 'revoke'),
      (e) => e !== undefined,
    );
    expect(revoke).toEqual({
      id: expect.any(String),
      from: jid(ME),
      chat: jid(ME),
      kind: 'revoke',
      content: original.waMessageId,
      target: { id: original.waMessageId, remoteJid: jid(BOB), fromMe: true, participant: null },
      receivedAt: AT,
      duplicates: 0,
    });
    // the original stays, marked deleted; a plain text shows none of the new fields
    expect(await entry(BOB, original.waMessageId)).toEqual({
      id: original.waMessageId,
      from: jid(ME),
      chat: jid(ME),
      kind: 'text',
      content: 'the plan',
      receivedAt: AT,
      duplicates: 0,
      deletedAt: AT,
    });
  });
});
