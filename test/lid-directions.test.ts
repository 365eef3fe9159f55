import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { linkSession, waitUntil } from './helpers/sandbox.ts';

const ME = '15557720001';
const BEA = '15557720002';
const CAL = '15557720003';
const DEE = '15557720004';
const EVE = '15557720005';
const HID = '15557720006';
const jid = (n: string) => `${n}@s.whatsapp.net`;

// The LID rules of docs/phone-numbers-and-lids.md in the directions a caller meets them: a send, a save,
// a contact group and a bulk send addressed by LID, on today's LID-first network.
describe.each(dbKinds)('LID rules in every direction (%s)', (kind) => {
  let sandbox: Sandbox;
  let app: TestApp;
  let receiver: Receiver;
  let key: string;
  let sessionId: string;
  const lid = (n: string) => sandbox.control.phone(n).lid;
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  const nextIncoming = async (): Promise<Json> => {
    const res = await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=10000&limit=1`);
    expect(res.body.count).toBe(1);
    return res.body.items[0];
  };
  /** The phone writes to the session; the service has then learnt its number and LID together. */
  const introduce = async (number: string) => {
    await sandbox.control.sendText(number, ME, `hello from ${number}`);
    expect(await nextIncoming()).toMatchObject({ from: jid(number), fromLid: lid(number) });
  };
  const delivered = async (id: string): Promise<Json> =>
    (
      await waitUntil(
        () => call('GET', `/v1/sessions/${sessionId}/messages/${id}`),
        (r) => r.body.deliveredAt !== null,
      )
    ).body;

  beforeAll(async () => {
    sandbox = await startSandbox({ addressing: 'lid' });
    receiver = await startReceiver();
    app = await startTestApp(
      kind,
      { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_BASE_MS: 100, WEBHOOK_POLL_MS: 50 },
      { target: { sandbox: sandboxAddress(sandbox) }, sessionTuning: { backoffBaseMs: 100, backoffMaxMs: 1_000 } },
    );
    key = (await app.newAccount()).apiKey;
    sessionId = await linkSession({ app, sandbox, key }, ME);
    for (const [n, name] of [
      [BEA, 'Bea'],
      [CAL, 'Cal'],
      [DEE, 'Dee'],
      [EVE, 'Eve'],
      [HID, 'Hid'],
    ] as const)
      sandbox.control.addPhone(n, name);
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['message.sent'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    await sandbox?.close();
  });

  it('records a send to a LID whose number is known under the number, the LID beside it: one history whichever address was used', async () => {
    await introduce(BEA);
    const byNumber = await call('POST', `/v1/sessions/${sessionId}/send`, { to: BEA, message: 'by number' });
    const byLid = await call('POST', `/v1/sessions/${sessionId}/send`, { to: lid(BEA), message: 'by LID' });
    expect([byNumber.status, byLid.status]).toEqual([200, 200]);
    expect(await delivered(byLid.body.id)).toMatchObject({ toNumber: jid(BEA), toLid: lid(BEA), status: 'SENT' });
    await delivered(byNumber.body.id);
    expect(sandbox.control.inbox(BEA).filter((m) => m.content === 'by LID')).toHaveLength(1);

    const history = async (to: string) =>
      (await call('GET', `/v1/sessions/${sessionId}/messages?to=${encodeURIComponent(to)}`)).body.items.map((m: Json) => m.content);
    expect(await history(BEA)).toEqual(['by LID', 'by number']);
    expect(await history(jid(BEA))).toEqual(['by LID', 'by number']);
    expect(await history(lid(BEA))).toEqual(['by LID', 'by number']);

    const sent = await waitUntil(
      async () => receiver.received.find((r) => r.payload.data.messageId === byLid.body.id),
      (r) => r !== undefined,
    );
    expect(sent?.payload).toMatchObject({ type: 'message.sent', data: { to: jid(BEA), toLid: lid(BEA) } });
  });

  it('keeps one contact per person when it is saved by LID, then by number (the pair known from a message)', async () => {
    await introduce(CAL);
    const byLid = await call('POST', '/v1/contacts', { jid: lid(CAL), name: 'Cal', tags: ['cal'] });
    expect(byLid.status).toBe(201);
    expect(byLid.body).toMatchObject({ jid: jid(CAL), lid: lid(CAL), phone: CAL, name: 'Cal' });
    const byNumber = await call('POST', '/v1/contacts', { phone: CAL, email: 'cal@example.com', tags: ['cal'] });
    expect(byNumber.status).toBe(200);
    expect(byNumber.body).toEqual({ ...byLid.body, email: 'cal@example.com' });
    expect((await call('GET', '/v1/contacts?tag=cal')).body.total).toBe(1);
    expect((await call('GET', `/v1/contacts/${CAL}`)).body).toEqual(byNumber.body);
    expect((await call('GET', `/v1/contacts/${encodeURIComponent(lid(CAL))}`)).body).toEqual(byNumber.body);
  });

  it('moves a contact saved by LID to its number once a message tells both: found by number, saved by number into the same contact', async () => {
    const byLid = await call('POST', '/v1/contacts', { jid: lid(DEE), name: 'Dee', tags: ['dee'] });
    expect(byLid.status).toBe(201);
    expect(byLid.body).toMatchObject({ jid: lid(DEE), lid: lid(DEE), phone: '' });
    await introduce(DEE);
    const found = await waitUntil(
      () => call('GET', `/v1/contacts/${DEE}`),
      (r) => r.status === 200,
    );
    expect(found.body).toEqual({ ...byLid.body, jid: jid(DEE), lid: lid(DEE), phone: DEE });
    const byNumber = await call('POST', '/v1/contacts', { phone: DEE, email: 'dee@example.com' });
    expect(byNumber.status).toBe(200);
    expect(byNumber.body).toEqual({ ...found.body, email: 'dee@example.com' });
    expect((await call('GET', '/v1/contacts?tag=dee')).body.total).toBe(1);
  });

  it('adds a contact to a contact group by its LID, and removes it by its LID', async () => {
    expect((await call('POST', '/v1/contacts', { phone: EVE, name: 'Eve' })).status).toBe(201);
    await introduce(EVE);
    await waitUntil(
      () => call('GET', `/v1/contacts/${EVE}`),
      (r) => r.body.lid === lid(EVE),
    );
    const group = await call('POST', '/v1/contacts/groups', { name: 'By LID' });
    expect(group.status).toBe(201);
    const members = `/v1/contacts/groups/${group.body.id}/members`;
    const added = await call('POST', members, { jids: [lid(EVE), EVE] });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ ok: true, added: 1, errors: [{ jid: EVE, reason: 'duplicate' }] });
    expect((await call('POST', members, { jids: [lid(EVE)] })).body).toEqual({
      ok: true,
      added: 0,
      errors: [{ jid: lid(EVE), reason: 'already_member' }],
    });
    expect((await call('DELETE', `${members}/${encodeURIComponent(lid(EVE))}`)).status).toBe(200);
    expect((await call('POST', members, { jids: [EVE] })).body).toEqual({ ok: true, added: 1, errors: [] });
  });

  it("leaves {phone} empty in a bulk send to a contact whose number is hidden, never the LID's digits", async () => {
    sandbox.control.hideNumber(HID);
    await sandbox.control.sendText(HID, ME, 'guess who');
    expect(await nextIncoming()).toMatchObject({ from: lid(HID), fromLid: lid(HID) });
    expect((await call('POST', '/v1/contacts', { jid: lid(HID), name: 'Hid', tags: ['hidden'] })).status).toBe(201);
    expect((await call('POST', '/v1/contacts', { phone: BEA, name: 'Bea', tags: ['hidden'] })).status).toBe(201);
    const bulk = await call('POST', `/v1/sessions/${sessionId}/bulk/tag/hidden`, { message: 'Hi {name}, your number: "{phone}"' });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ total: 2, sent: 2, failed: 0, errors: [] });
    expect(sandbox.control.inbox(HID).map((m) => m.content)).toContain('Hi Hid, your number: ""');
    expect(sandbox.control.inbox(BEA).map((m) => m.content)).toContain(`Hi Bea, your number: "${BEA}"`);
  });

  it("fills a campaign's {name} with the number where it is known, and leaves it empty for a hidden one, never the LID's digits", async () => {
    sandbox.control.hideNumber(HID);
    await introduce(DEE);
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/campaign`, {
      contacts: [{ jid: lid(HID) }, { jid: lid(DEE) }],
      template: 'Campaign for [{name}]',
    });
    expect(res.body).toMatchObject({ ok: true, count: 2 });
    await waitUntil(
      async () => [...sandbox.control.inbox(HID), ...sandbox.control.inbox(DEE)].map((m) => m.content),
      (t) => t.includes('Campaign for []') && t.includes(`Campaign for [${DEE}]`),
    );
  });
});
