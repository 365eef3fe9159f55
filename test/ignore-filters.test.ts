import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15559940001';
const ANN = '15559940002';
const jid = (n: string) => `${n}@s.whatsapp.net`;
const CHANNEL = '120363000000009999@newsletter';

const FAST = { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_BASE_MS: 100, WEBHOOK_POLL_MS: 50 };

type Sent = { id: string; delivered: number };

// Statuses, broadcast lists and channels, each sent by the sandbox as WhatsApp delivers it to a linked device.
describe.each(dbKinds)('ignore filters for statuses, broadcasts and channels; group reactions (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  let receiver: Receiver;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const S = () => `/v1/sessions/${sessionId}`;
  const hooks = (type: string) => receiver.received.filter((r) => r.payload.type === type).map((r) => r.payload.data as Json);
  const drain = async (): Promise<Json[]> => (await call('GET', `${S()}/incoming?limit=100`)).body.items;
  /**
   * Received messages are handed over in the order they arrived, so once a 1:1 text sent after `sent`
   * is in the buffer, `sent` was either buffered before it or dropped.
   */
  const thenDirect = async (text: string): Promise<Json[]> => {
    await ctx.sandbox.control.sendText(ANN, ME, text);
    const seen: Json[] = [];
    await waitUntil(
      async () => {
        seen.push(...(await drain()));
        return seen;
      },
      (items) => items.some((i) => i.content === text),
    );
    return seen;
  };

  /** With the filter off the item arrives (buffer and webhook); with it on nothing of it is kept. */
  const checkFilter = async (setting: string, chatId: (sent: Sent) => string, send: (text: string) => Promise<Sent>) => {
    const shown = await send(`${setting} off`);
    expect(shown.delivered).toBe(1);
    const before = await thenDirect(`after ${setting} off`);
    expect(before.map((i) => ({ chatId: i.chatId, content: i.content, waMessageId: i.waMessageId }))).toEqual([
      { chatId: chatId(shown), content: `${setting} off`, waMessageId: shown.id },
      { chatId: jid(ANN), content: `after ${setting} off`, waMessageId: expect.any(String) },
    ]);
    await waitUntil(
      async () => hooks('message.received').map((h) => h.waMessageId),
      (ids) => ids.includes(shown.id),
    );

    expect((await call('PATCH', `${S()}/settings`, { [setting]: true })).body.settings[setting]).toBe(true);
    const dropped = await send(`${setting} on`);
    expect(dropped.delivered).toBe(1);
    const after = await thenDirect(`after ${setting} on`);
    expect(after.map((i) => i.content)).toEqual([`after ${setting} on`]);
    await waitUntil(
      async () => hooks('message.received').map((h) => h.content),
      (contents) => contents.includes(`after ${setting} on`),
    );
    expect(hooks('message.received').map((h) => h.waMessageId)).not.toContain(dropped.id);
    // not kept either: a reply cannot quote it (404, nothing sent)
    const quote = await call('POST', `${S()}/send`, { to: ANN, message: 'quoting it', quotedMessageId: dropped.id });
    expect(quote.status).toBe(404);
    expect((await call('PATCH', `${S()}/settings`, { [setting]: false })).status).toBe(200);
  };

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, FAST);
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(ANN, 'Ann');
    receiver = await startReceiver();
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.received', 'message.reaction'], sessionId });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('ignoreStatuses drops statuses (status@broadcast) and nothing else', async () => {
    await checkFilter(
      'ignoreStatuses',
      () => 'status@broadcast',
      (text) => ctx.sandbox.control.postStatus(ANN, [ME], text),
    );
    // the status that arrived names its poster
    const hook = hooks('message.received').find((h) => h.content === 'ignoreStatuses off');
    expect(hook).toMatchObject({ chatId: 'status@broadcast', from: jid(ANN) });
  });

  it('ignoreBroadcasts drops messages received through a broadcast list', async () => {
    const LIST = '1764200000';
    await checkFilter(
      'ignoreBroadcasts',
      () => `${LIST}@broadcast`,
      (text) => ctx.sandbox.control.sendBroadcast(ANN, [ME], text, LIST),
    );
    expect(hooks('message.received').find((h) => h.content === 'ignoreBroadcasts off')).toMatchObject({ from: jid(ANN) });
  });

  it('ignoreChannels drops channel posts', async () => {
    await checkFilter(
      'ignoreChannels',
      () => CHANNEL,
      async (text) => ctx.sandbox.control.postToChannel(CHANNEL, [ME], text),
    );
  });

  it("a member's reaction in a group raises message.reaction pointing at our group message", async () => {
    const group = await call('POST', `${S()}/groups`, { subject: 'Reactions', participants: [ANN] });
    expect(group.status).toBe(200);
    const groupId: string = group.body.id;
    const sent = await call('POST', `${S()}/groups/${groupId}/send`, { message: 'react here' });
    const record = (
      await waitUntil(
        () => call('GET', `${S()}/messages/${sent.body.id}`),
        (r) => r.body.status === 'SENT' && r.body.waMessageId,
      )
    ).body;
    await waitUntil(
      async () => ctx.sandbox.control.inbox(ANN).find((e) => e.id === record.waMessageId),
      (e) => e !== undefined,
    );
    const reaction = await ctx.sandbox.control.react(ANN, groupId, record.waMessageId, '🔥');
    expect(reaction.delivered).toBe(1);
    const [hook] = await waitUntil(
      async () => hooks('message.reaction').filter((h) => h.waMessageId === reaction.id),
      (found) => found.length === 1,
    );
    expect(hook).toEqual({
      type: 'message.reaction',
      sessionId,
      chatId: groupId,
      chatLid: null,
      from: jid(ANN),
      fromLid: ctx.sandbox.control.phone(ANN).lid,
      fromMe: false,
      waMessageId: reaction.id,
      emoji: '🔥',
      text: null,
      target: { waMessageId: record.waMessageId, messageId: record.id, chatId: groupId },
      messageTimestamp: expect.any(Number),
      receivedAt: expect.stringMatching(/Z$/),
    });
    // a text from the member arrives in the group too, from the member
    await ctx.sandbox.control.sendText(ANN, groupId, 'and a word');
    const items = await waitUntil(drain, (found) => found.some((i) => i.content === 'and a word'));
    expect(items.find((i) => i.content === 'and a word')).toMatchObject({ chatId: groupId, from: jid(ANN) });
  });
});
