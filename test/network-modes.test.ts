import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSettings, networkMode } from '../src/runtime/settings.ts';
import { http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

// The same flow with the links in each place they can run: a network process, a worker thread, and the
// main thread (the default, which every other end-to-end test uses too); and what the modes share.
describe.each([
  { mode: 'process', me: '15554440001', friend: '15554440002' },
  { mode: 'thread', me: '15554440021', friend: '15554440022' },
  { mode: 'inline', me: '15554440011', friend: '15554440012' },
] as const)('sends, receives and deletes with NETWORK_MODE=$mode', ({ mode, me, friend }) => {
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite', { NETWORK_MODE: mode });
    sessionId = await linkSession(ctx, me);
    ctx.sandbox.control.addPhone(friend, 'Friend');
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('delivers concurrent sends once each, every record SENT when its answer arrives', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call('POST', `/v1/sessions/${sessionId}/send`, { to: friend, message: `burst ${i}` })),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    // Read at once: the SENT marks are written behind, and reads must still see them.
    const records = await Promise.all(answers.map((a) => call('GET', `/v1/sessions/${sessionId}/messages/${a.body.id}`)));
    expect(records.map((r) => r.body.status)).toEqual(Array(12).fill('SENT'));
    const inbox = await waitUntil(
      async () => ctx.sandbox.control.inbox(friend).filter((e) => e.content.startsWith('burst ')),
      (entries) => entries.length === 12,
    );
    expect(new Set(inbox.map((e) => e.content)).size).toBe(12);
    expect(inbox.every((e) => e.duplicates === 0)).toBe(true);
    expect(new Set(inbox.map((e) => e.id))).toEqual(new Set(records.map((r) => r.body.waMessageId)));
  });

  it('puts a message from the phone in the incoming buffer', async () => {
    const poll = call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=10000`);
    await ctx.sandbox.control.sendText(friend, me, 'hello from the phone');
    const answer = await poll;
    expect(answer.body).toMatchObject({
      count: 1,
      items: [{ from: `${friend}@s.whatsapp.net`, type: 'text', content: 'hello from the phone' }],
    });
  });

  it("decrypts a phone's vote on a poll where the link runs, and tallies it", async () => {
    const sent = await call('POST', `/v1/sessions/${sessionId}/messages/poll`, { to: friend, name: 'Mode?', options: ['A', 'B'] });
    expect(sent.status).toBe(200);
    const record = await call('GET', `/v1/sessions/${sessionId}/messages/${sent.body.id}`);
    await waitUntil(
      async () => ctx.sandbox.control.inbox(friend).some((e) => e.id === record.body.waMessageId && e.kind === 'poll'),
      (found) => found,
    );
    await ctx.sandbox.control.vote(friend, me, record.body.waMessageId, ['B']);
    const tally = await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/messages/${sent.body.id}/poll`),
      (r) => r.body.poll.totalVoters === 1,
    );
    expect(tally.body.poll.options).toEqual([
      { name: 'A', votes: 0, voters: [] },
      { name: 'B', votes: 1, voters: [`${friend}@s.whatsapp.net`] },
    ]);
  });

  it('keeps the Signal keys of a send, so the link comes back after a restart of the link and still sends', async () => {
    expect((await call('POST', `/v1/sessions/${sessionId}/disconnect`)).status).toBe(200);
    await call('POST', `/v1/sessions/${sessionId}/connect`);
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
    );
    expect((await call('POST', `/v1/sessions/${sessionId}/send`, { to: friend, message: 'after the restart' })).status).toBe(200);
    await waitUntil(
      async () => ctx.sandbox.control.inbox(friend).map((e) => e.content),
      (texts) => texts.includes('after the restart'),
    );
  });

  it('answers 404, not 409, for sends on a session deleted a moment ago', async () => {
    expect((await call('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(200);
    const res = await call('POST', `/v1/sessions/${sessionId}/send`, { to: friend, message: 'too late' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('the network process', () => {
  it('is chosen with NETWORK_MODE; the main thread is the default, NETWORK_THREAD=true still means a thread', () => {
    expect(networkMode(defaultSettings())).toBe('inline');
    expect(networkMode(defaultSettings({ NETWORK_MODE: 'process' }))).toBe('process');
    expect(networkMode(defaultSettings({ NETWORK_THREAD: false }))).toBe('inline');
    expect(networkMode(defaultSettings({ NETWORK_THREAD: true }))).toBe('thread');
    expect(networkMode(defaultSettings({ NETWORK_THREAD: false, NETWORK_MODE: 'thread' }))).toBe('thread');
  });

  it('dies: its links report a transient close and re-link on a new process, which sends', async () => {
    const me = '15554440031';
    const friend = '15554440032';
    const ctx = await startWithSandbox('sqlite', { NETWORK_MODE: 'process' });
    try {
      const sessionId = await linkSession(ctx, me);
      ctx.sandbox.control.addPhone(friend, 'Friend');
      const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
      const first = (await ctx.app.deps.sessions.networkStats())?.process?.pid;
      expect(first).toBeGreaterThan(0);
      process.kill(first as number, 'SIGKILL');
      // A new process starts only after the old one's exit was handled (its links closed).
      const second = await waitUntil(
        // asked while the old process dies, the question fails with it
        async () => (await ctx.app.deps.sessions.networkStats().catch(() => undefined))?.process?.pid,
        (pid) => pid !== undefined && pid !== first,
        30_000,
      );
      expect(second).toBeGreaterThan(0);
      await waitUntil(
        () => call('GET', `/v1/sessions/${sessionId}/status`),
        (r) => r.body.status === 'CONNECTED',
        30_000,
      );
      expect((await call('POST', `/v1/sessions/${sessionId}/send`, { to: friend, message: 'after the crash' })).status).toBe(200);
      await waitUntil(
        async () => ctx.sandbox.control.inbox(friend).map((e) => e.content),
        (texts) => texts.includes('after the crash'),
      );
      expect(ctx.sandbox.control.phone(me).devices).toHaveLength(1);
    } finally {
      await ctx.app.close();
      await ctx.sandbox.close();
    }
  }, 60_000);
});
