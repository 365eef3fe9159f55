import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';
import { linkSession, waitUntil } from './helpers/sandbox.ts';

const ME = '15557710001';
const ANN = '15557710002';
const HIDDEN = '15557710003';
const LATER = '15557710004';
const jid = (n: string) => `${n}@s.whatsapp.net`;

// Today's network (the sandbox's default): phones write from their LID, the number beside it unless hidden.
describe.each(dbKinds)('phone numbers and LIDs end to end (%s)', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let app: TestApp;
  let key: string;
  let sessionId: string;
  const lid = (n: string) => sandbox.control.phone(n).lid;
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  /** The service on this test's database: a second call after close() is a restart on the same data. */
  const start = () =>
    startTestApp(
      kind,
      {},
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 } },
      { existing: database },
    );
  const nextIncoming = async (): Promise<Json> => {
    const res = await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=10000&limit=1`);
    expect(res.body.count).toBe(1);
    return res.body.items[0];
  };
  const record = async (id: string, until: (r: Json) => boolean) =>
    (
      await waitUntil(
        () => call('GET', `/v1/sessions/${sessionId}/messages/${id}`),
        (r) => until(r.body),
      )
    ).body;

  beforeAll(async () => {
    sandbox = await startSandbox({ addressing: 'lid' });
    database = await createTestDatabase(kind);
    app = await start();
    key = (await app.newAccount()).apiKey;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    for (const [n, name] of [
      [ANN, 'Ann'],
      [HIDDEN, 'Hidden'],
      [LATER, 'Later'],
    ] as const)
      sandbox.control.addPhone(n, name);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await database?.drop();
    await sandbox?.close();
  });

  it('shows a LID-addressed sender by number with the LID beside it; the contact saved by number learns the LID and answers for both', async () => {
    expect((await call('POST', '/v1/contacts', { phone: ANN, name: 'Ann', tags: ['lid'] })).status).toBe(201);
    await sandbox.control.sendText(ANN, ME, 'hello from my LID');
    const item = await nextIncoming();
    expect(item).toMatchObject({ chatId: jid(ANN), chatLid: lid(ANN), from: jid(ANN), fromLid: lid(ANN), content: 'hello from my LID' });

    const contact = await waitUntil(
      () => call('GET', `/v1/contacts/${ANN}`),
      (r) => r.body.lid !== null,
    );
    expect(contact.body).toMatchObject({ jid: jid(ANN), lid: lid(ANN), phone: ANN, name: 'Ann' });
    expect((await call('GET', `/v1/contacts/${encodeURIComponent(lid(ANN))}`)).body).toEqual(contact.body);
    // Saving the LID form updates the same person: still one contact.
    const again = await call('POST', '/v1/contacts', { jid: lid(ANN), email: 'ann@example.com' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: contact.body.id, jid: jid(ANN), lid: lid(ANN), email: 'ann@example.com' });
    expect((await call('GET', '/v1/contacts?tag=lid')).body.total).toBe(1);
  });

  it('sends by number to a LID-addressed phone: it arrives, the record keeps the LID, and the receipt from the LID marks it delivered', async () => {
    const sent = await call('POST', `/v1/sessions/${sessionId}/send`, { to: ANN, message: 'by number' });
    expect(sent.status).toBe(200);
    const delivered = await record(sent.body.id, (r) => r.deliveredAt !== null);
    expect(delivered).toMatchObject({ toNumber: jid(ANN), toLid: lid(ANN), status: 'SENT' });
    expect(sandbox.control.inbox(ANN).filter((m) => m.content === 'by number')).toHaveLength(1);
    sandbox.control.read(ANN, { ids: [delivered.waMessageId] });
    const read = await record(sent.body.id, (r) => r.readAt !== null);
    expect(read.readAt).not.toBeNull();
    const receipts = await call('GET', `/v1/sessions/${sessionId}/messages/${sent.body.id}/receipts`);
    expect(receipts.body.items).toEqual([
      { recipient: jid(ANN), recipientLid: lid(ANN), deliveredAt: read.deliveredAt, readAt: read.readAt, playedAt: null },
    ]);
  });

  it('shows a sender who hides their number by LID alone, never as a number, and a reply to that LID reaches them', async () => {
    sandbox.control.hideNumber(HIDDEN);
    await sandbox.control.sendText(HIDDEN, ME, 'guess who');
    const item = await nextIncoming();
    expect(item).toMatchObject({
      chatId: lid(HIDDEN),
      chatLid: lid(HIDDEN),
      from: lid(HIDDEN),
      fromLid: lid(HIDDEN),
      content: 'guess who',
    });
    expect(item.from).not.toContain(HIDDEN);

    const reply = await call('POST', `/v1/sessions/${sessionId}/send`, { to: item.from, message: 'hello, whoever you are' });
    expect(reply.status).toBe(200);
    const done = await record(reply.body.id, (r) => r.deliveredAt !== null);
    expect(done).toMatchObject({ toNumber: lid(HIDDEN), status: 'SENT' });
    expect(sandbox.control.inbox(HIDDEN).filter((m) => m.content === 'hello, whoever you are')).toHaveLength(1);
  });

  it('bulk sends by tag reach a contact saved by LID and one saved by number, each once', async () => {
    await call('POST', '/v1/contacts', { jid: lid(HIDDEN), name: 'By LID', tags: ['both-ways'] });
    await call('POST', '/v1/contacts', { phone: ANN, tags: ['lid', 'both-ways'] });
    const bulk = await call('POST', `/v1/sessions/${sessionId}/bulk/tag/both-ways`, { message: 'hi {name}' });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ total: 2, sent: 2, failed: 0, errors: [] });
    expect(sandbox.control.inbox(HIDDEN).filter((m) => m.content === 'hi By LID')).toHaveLength(1);
    expect(sandbox.control.inbox(ANN).filter((m) => m.content === 'hi Ann')).toHaveLength(1);
  });

  it('keeps what it learnt across a restart: a sender who hides their number later is still shown by number', async () => {
    await sandbox.control.sendText(LATER, ME, 'before the restart');
    expect(await nextIncoming()).toMatchObject({ from: jid(LATER), fromLid: lid(LATER) });
    await app.close();
    app = await start();
    // As main.ts does at start: the sessions that were linked re-link from their stored keys.
    await app.deps.sessions.markRelinking();
    await app.deps.sessions.resumeAll();
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
      30_000,
    );
    sandbox.control.hideNumber(LATER);
    expect((await sandbox.control.sendText(LATER, ME, 'after the restart, number hidden')).delivered).toBe(1);
    expect(await nextIncoming()).toMatchObject({
      chatId: jid(LATER),
      from: jid(LATER),
      fromLid: lid(LATER),
      content: 'after the restart, number hidden',
    });
  });
});

// The older network (SANDBOX_ADDRESSING=pn): everyone named by phone number; the same flows still work.
describe('phone-number addressing still works (sqlite)', () => {
  let sandbox: Sandbox;
  let app: TestApp;
  let key: string;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });

  beforeAll(async () => {
    sandbox = await startSandbox({ addressing: 'pn' });
    app = await startTestApp(
      'sqlite',
      {},
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 } },
    );
    key = (await app.newAccount()).apiKey;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    sandbox.control.addPhone(ANN, 'Ann');
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await sandbox?.close();
  });

  it('receives by number, sends by number with its receipt, and lists group members by number', async () => {
    await sandbox.control.sendText(ANN, ME, 'plain old number');
    const incoming = await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=10000&limit=1`);
    expect(incoming.body.items[0]).toMatchObject({ chatId: jid(ANN), from: jid(ANN), content: 'plain old number' });

    const sent = await call('POST', `/v1/sessions/${sessionId}/send`, { to: ANN, message: 'and back' });
    const done = await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/messages/${sent.body.id}`),
      (r) => r.body.deliveredAt !== null,
    );
    expect(done.body).toMatchObject({ toNumber: jid(ANN), remoteJid: jid(ANN), status: 'SENT' });
    expect(sandbox.control.inbox(ANN).filter((m) => m.content === 'and back')).toHaveLength(1);

    const group = await call('POST', `/v1/sessions/${sessionId}/groups`, { subject: 'By number', participants: [ANN] });
    expect(group.status).toBe(200);
    expect(group.body.participants).toContainEqual(expect.objectContaining({ id: jid(ANN), phoneNumber: ANN }));
    expect(sandbox.control.groups().find((g) => g.id === group.body.id)?.addressingMode).toBe('pn');
  });
});
