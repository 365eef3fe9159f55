import { DisconnectReason, proto } from 'baileys';
import type { WAMessageKey } from 'baileys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox.ts';
import { startSandbox, trustSandbox } from '../../src/runtime/sandbox/sandbox.ts';
import type { TestSocket } from './helpers.ts';
import { linkedSocket, memoryAuth, openSocket, waitFor } from './helpers.ts';

const { ERROR, SERVER_ACK, DELIVERY_ACK } = proto.WebMessageInfo.Status;
const PEER = '15557770001';
const STRANGER = '15557770002';
const NEWCOMER = '15557770003';

interface Boomish {
  message?: string;
  data?: unknown;
  output?: { statusCode?: number };
}
const boom = (error: unknown): Boomish => (error ?? {}) as Boomish;

type StatusUpdate = { key: WAMessageKey; status?: number | null; stub?: string[] | null };

/** Every status Baileys reports for this socket's messages: in messages.update, or merged into the send's own upsert while buffered. */
const watchStatuses = (socket: TestSocket): StatusUpdate[] => {
  const updates: StatusUpdate[] = [];
  socket.sock.ev.on('messages.upsert', ({ messages }) =>
    updates.push(...messages.map((m) => ({ key: m.key, status: m.status, stub: m.messageStubParameters }))),
  );
  socket.sock.ev.on('messages.update', (u) =>
    updates.push(...u.map(({ key, update }) => ({ key, status: update.status, stub: update.messageStubParameters }))),
  );
  return updates;
};

describe('sandbox: push-back (rates, restrictions, bans)', () => {
  let sandbox: Sandbox;
  const control = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => {
    const res = await fetch(new URL(path, sandbox.controlUrl), {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    trustSandbox(sandbox.rootPublicKey);
    sandbox.control.addPhone(PEER, 'Peer');
    sandbox.control.addPhone(STRANGER, 'Stranger');
    sandbox.control.addPhone(NEWCOMER, 'Newcomer');
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('refuses sends past the rate with ack 429 (messages.update ERROR), and lets them through again as the window slides', async () => {
    const ME = '15557771001';
    const me = await linkedSocket(sandbox, ME);
    const statuses = watchStatuses(me);
    const to = `${PEER}@s.whatsapp.net`;
    // Out of the window before the rate is set: the first send's device lookup is not what is limited here.
    await me.sock.sendMessage(to, { text: 'warm-up' });

    const set = await control('POST', `/phones/${ME}/rate`, { messages: 2, windowMs: 1500 });
    expect(set.status).toBe(200);
    expect(set.body.pushback).toMatchObject({ rate: { messages: 2, windowMs: 1500 } });
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      // rc14 does not wait for the ack: the refused send resolves like the others
      const msg = await me.sock.sendMessage(to, { text });
      ids.push(msg?.key.id ?? '');
    }
    const refused = await waitFor(() => statuses.find((u) => u.key.id === ids[2] && u.status === ERROR));
    expect(refused.stub).toEqual(['429']);
    await waitFor(() => statuses.find((u) => u.key.id === ids[1] && (u.status === SERVER_ACK || u.status === DELIVERY_ACK)));
    expect(statuses.some((u) => (u.key.id === ids[0] || u.key.id === ids[1]) && u.status === ERROR)).toBe(false);
    await waitFor(() => sandbox.control.inbox(PEER).find((e) => e.id === ids[1]));
    expect(sandbox.control.inbox(PEER).some((e) => e.id === ids[2])).toBe(false);
    expect(sandbox.control.phone(ME).pushback.refused).toMatchObject({ messages: 1, usync: 0 });

    // The window slides: once the first two are older than it, sending resumes by itself.
    await new Promise((r) => setTimeout(r, 1600));
    const later = await me.sock.sendMessage(to, { text: 'four' });
    await waitFor(() => sandbox.control.inbox(PEER).find((e) => e.id === later?.key.id));

    const lifted = await control('DELETE', `/phones/${ME}/rate`);
    expect(lifted.body.pushback).toMatchObject({ rate: null, refused: { messages: 1 } });
    me.sock.end(undefined);
  });

  it('answers usync queries past the rate with the IQ error rc14 throws (rate-overlimit, data 429), sends needing one included', async () => {
    const ME = '15557771002';
    const me = await linkedSocket(sandbox, ME);
    sandbox.control.rateLimit(ME, { usync: 1, windowMs: 1500 });
    expect((await me.sock.onWhatsApp(PEER))?.[0]).toMatchObject({ exists: true });
    const error = await me.sock.onWhatsApp(PEER).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(boom(error).message).toBe('rate-overlimit');
    expect(boom(error).data).toBe(429);
    // A first send to a number looks up its devices by usync first: it throws the same error, and nothing is sent.
    const sendError = await me.sock.sendMessage(`${STRANGER}@s.whatsapp.net`, { text: 'no devices known' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(boom(sendError)).toMatchObject({ message: 'rate-overlimit', data: 429 });
    expect(sandbox.control.inbox(STRANGER)).toEqual([]);
    expect(sandbox.control.phone(ME).pushback.refused).toMatchObject({ usync: 2, messages: 0 });

    await new Promise((r) => setTimeout(r, 1600));
    expect((await me.sock.onWhatsApp(PEER))?.[0]).toMatchObject({ exists: true });
    me.sock.end(undefined);
  });

  it('a restriction refuses new chats with ack 463 while existing chats go on, until it ends', async () => {
    const ME = '15557771003';
    const me = await linkedSocket(sandbox, ME);
    const statuses = watchStatuses(me);
    // An existing chat: the peer wrote to this account before the restriction.
    const hello = await sandbox.control.sendText(PEER, ME, 'hi, it is me');
    expect(hello.delivered).toBe(1);
    expect(sandbox.control.phone(ME).pushback.chats).toEqual([PEER]);

    const restricted = await control('POST', `/phones/${ME}/restrict`, {});
    expect(restricted.body.pushback).toMatchObject({ restriction: { until: null } });
    const cold = await me.sock.sendMessage(`${STRANGER}@s.whatsapp.net`, { text: 'cold outreach' });
    const warm = await me.sock.sendMessage(`${PEER}@s.whatsapp.net`, { text: 'reply in an existing chat' });
    const error = await waitFor(() => statuses.find((u) => u.key.id === cold?.key.id && u.status === ERROR));
    // rc14 reads 463 as MessageAccountRestriction and as SenderReachoutTimelocked, hence the second parameter.
    expect(error.stub).toEqual(['463', 'Your account has been restricted']);
    const arrived = await waitFor(() => sandbox.control.inbox(PEER).find((e) => e.id === warm?.key.id));
    expect(arrived.content).toBe('reply in an existing chat');
    expect(sandbox.control.inbox(STRANGER).some((e) => e.id === cold?.key.id)).toBe(false);

    // A contact who writes first opens the chat: the answer goes through.
    await sandbox.control.sendText(NEWCOMER, ME, 'hello, new here');
    const answer = await me.sock.sendMessage(`${NEWCOMER}@s.whatsapp.net`, { text: 'welcome' });
    await waitFor(() => sandbox.control.inbox(NEWCOMER).find((e) => e.id === answer?.key.id));
    expect(sandbox.control.phone(ME).pushback.refused.newChats).toBe(1);

    // A restriction for a time ends by itself.
    sandbox.control.restrict(ME, 400);
    expect(sandbox.control.phone(ME).pushback.restriction?.until).toMatch(/^\d{4}-/);
    await new Promise((r) => setTimeout(r, 500));
    expect(sandbox.control.phone(ME).pushback.restriction).toBeNull();
    const thaw = await me.sock.sendMessage(`${STRANGER}@s.whatsapp.net`, { text: 'after the restriction' });
    await waitFor(() => sandbox.control.inbox(STRANGER).find((e) => e.id === thaw?.key.id));
    me.sock.end(undefined);
  });

  it('a ban ends the link (stream error 503) and refuses every login with failure 403 (DisconnectReason.forbidden) until lifted', async () => {
    const ME = '15557771004';
    sandbox.control.addPhone(ME, 'Banned');
    const auth = memoryAuth();
    const first = openSocket(sandbox, auth);
    const { qr } = await first.waitFor((u) => Boolean(u.qr));
    await sandbox.control.scanQr(ME, qr ?? '');
    await first.waitFor((u) => u.connection === 'close');
    const me = openSocket(sandbox, auth);
    await me.waitFor((u) => u.connection === 'open');

    const banned = await control('POST', `/phones/${ME}/ban`, {});
    expect(banned.body).toMatchObject({ ended: 1, phone: { pushback: { ban: { temporary: false, reason: 403, until: null } } } });
    const closed = await me.waitFor((u) => u.connection === 'close');
    expect(boom(closed.lastDisconnect?.error).output?.statusCode).toBe(DisconnectReason.unavailableService);

    const relogin = openSocket(sandbox, auth);
    const refused = await relogin.waitFor((u) => u.connection === 'close');
    expect(boom(refused.lastDisconnect?.error).message).toBe('Connection Failure');
    expect(boom(refused.lastDisconnect?.error).output?.statusCode).toBe(DisconnectReason.forbidden);
    expect(relogin.updates.some((u) => u.connection === 'open')).toBe(false);
    expect(sandbox.control.phone(ME).pushback.refused.logins).toBe(1);
    // The banned number's phone links no new device either.
    const newcomer = openSocket(sandbox, memoryAuth());
    const other = await newcomer.waitFor((u) => Boolean(u.qr));
    await expect(sandbox.control.scanQr(ME, other.qr ?? '')).rejects.toThrow(/banned/);
    newcomer.sock.end(undefined);

    expect((await control('DELETE', `/phones/${ME}/ban`)).body.pushback).toMatchObject({ ban: null });
    const back = openSocket(sandbox, auth);
    await back.waitFor((u) => u.connection === 'open');
    back.sock.end(undefined);
  });

  it('a temporary ban refuses logins with failure 402 carrying its code and expiry, and ends by itself', async () => {
    const ME = '15557771005';
    sandbox.control.addPhone(ME, 'Suspended');
    const auth = memoryAuth();
    const first = openSocket(sandbox, auth);
    const { qr } = await first.waitFor((u) => Boolean(u.qr));
    await sandbox.control.scanQr(ME, qr ?? '');
    await first.waitFor((u) => u.connection === 'close');
    const me = openSocket(sandbox, auth);
    await me.waitFor((u) => u.connection === 'open');

    sandbox.control.ban(ME, { temporary: true, ms: 1500 });
    await me.waitFor((u) => u.connection === 'close');
    const relogin = openSocket(sandbox, auth);
    const refused = await relogin.waitFor((u) => u.connection === 'close');
    const error = boom(refused.lastDisconnect?.error);
    expect(error.output?.statusCode).toBe(402);
    expect(error.data).toMatchObject({ reason: '402', code: '101', expire: expect.stringMatching(/^[12]$/) });

    await new Promise((r) => setTimeout(r, 1600));
    expect(sandbox.control.phone(ME).pushback.ban).toBeNull();
    const back = openSocket(sandbox, auth);
    await back.waitFor((u) => u.connection === 'open');
    back.sock.end(undefined);
  });
});
