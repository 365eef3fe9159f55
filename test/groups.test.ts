import { randomBytes } from 'node:crypto';
import { http as mswHttp, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15558880001';
const A = '15558880002';
const B = '15558880003';
const SECOND = '15558880004';
const UNKNOWN_GROUP = '888888888@g.us';
const photo = randomBytes(2048);
const files = setupServer(
  mswHttp.get('https://files.example.com/crew.jpg', () =>
    HttpResponse.arrayBuffer(photo.buffer.slice(photo.byteOffset, photo.byteOffset + photo.length), {
      headers: { 'content-type': 'image/jpeg' },
    }),
  ),
);

describe('network groups, statuses and channels end to end', () => {
  let ctx: Linked;
  let sessionId: string;
  let groupId: string;
  const call = (method: string, path: string, body?: unknown, key = ctx.key) => http(ctx.app.baseUrl, method, path, { key, body });
  const inbox = (n: string) => ctx.sandbox.control.inbox(n);
  /** the LID the network gave a phone: group members carry it beside their number */
  const lid = (n: string) => ctx.sandbox.control.phone(n).lid;

  beforeAll(async () => {
    files.listen({ onUnhandledRequest: 'bypass' });
    ctx = await startWithSandbox();
    sessionId = await linkSession(ctx, ME);
    ctx.sandbox.control.addPhone(A, 'Ana');
    ctx.sandbox.control.addPhone(B, 'Ben');
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
    files.close();
  });

  it('creates a group with two phones and lists it with admins marked', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/groups`, { subject: 'Crew', participants: [A, B] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/@g\.us$/),
      subject: 'Crew',
      desc: '',
      participants: expect.arrayContaining([
        { id: `${ME}@s.whatsapp.net`, phoneNumber: ME, lid: lid(ME), admin: 'superadmin' },
        { id: `${A}@s.whatsapp.net`, phoneNumber: A, lid: lid(A) },
        { id: `${B}@s.whatsapp.net`, phoneNumber: B, lid: lid(B) },
      ]),
    });
    groupId = res.body.id;
    const list = await call('GET', `/v1/sessions/${sessionId}/groups`);
    expect(list.body.map((g: { id: string }) => g.id)).toContain(groupId);
    expect((await call('GET', `/v1/sessions/${sessionId}/groups-count`)).body).toEqual({ count: 1 });
  });

  it('sends text and interactive messages into the group, decrypted by both members', async () => {
    expect((await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/send`, { message: 'hi crew' })).body).toEqual({
      ok: true,
      id: expect.any(String),
    });
    const inter = await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/send-interactive`, {
      body: 'Vote',
      buttons: [{ type: 'reply', text: 'Yes' }],
    });
    expect(inter.body).toEqual({ ok: true, id: expect.any(String) });
    for (const n of [A, B]) {
      await waitUntil(
        async () =>
          inbox(n)
            .filter((e) => e.chat === groupId)
            .map((e) => e.content),
        (t) => t.includes('Vote [Yes]'),
      );
      expect(
        inbox(n)
          .filter((e) => e.chat === groupId)
          .map((e) => e.content),
      ).toEqual(['hi crew', 'Vote [Yes]']);
    }
  });

  it('reads the group from the network once per group send (the membership check also addresses the message)', async () => {
    ctx.sandbox.control.setTrace(true);
    try {
      const from = ctx.sandbox.control.trace().length;
      expect((await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/send`, { message: 'one read' })).status).toBe(200);
      await waitUntil(
        async () => inbox(A).map((e) => e.content),
        (t) => t.includes('one read'),
      );
      const reads = ctx.sandbox.control
        .trace()
        .slice(from)
        .filter((t) => t.direction === 'in' && t.stanza.includes("xmlns='w:g2'") && t.stanza.includes('<query'));
      expect(reads).toHaveLength(1);
    } finally {
      ctx.sandbox.control.setTrace(false);
    }
  });

  it('sends an image into the group, received by both members', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/send-media`, {
      mediaType: 'image',
      url: 'https://files.example.com/crew.jpg',
      caption: 'crew photo',
    });
    expect(res.body).toEqual({ ok: true, id: expect.any(String) });
    for (const n of [A, B]) {
      const entry = await waitUntil(async () => inbox(n).find((e) => e.chat === groupId && e.kind === 'image' && e.sha256), Boolean);
      expect(entry).toMatchObject({ caption: 'crew photo', mimetype: 'image/jpeg' });
    }
  });

  it('refuses text, media and interactive sends to a group that does not exist (404), sending and recording nothing', async () => {
    const sends: Array<[string, unknown]> = [
      ['send', { message: 'x' }],
      ['send-media', { mediaType: 'image', url: 'https://files.example.com/crew.jpg' }],
      ['send-interactive', { body: 'Vote', buttons: [{ type: 'reply', text: 'Yes' }] }],
    ];
    for (const [route, body] of sends) {
      const res = await call('POST', `/v1/sessions/${sessionId}/groups/${UNKNOWN_GROUP}/${route}`, body);
      expect({ route, status: res.status, body: res.body }).toEqual({
        route,
        status: 404,
        body: { ok: false, error: { code: 'NOT_FOUND', message: 'Group not found' } },
      });
    }
    expect((await call('GET', `/v1/sessions/${sessionId}/messages?to=${UNKNOWN_GROUP}`)).body).toEqual({ count: 0, items: [] });
    expect((await call('GET', `/v1/sessions/${sessionId}/messages?status=FAILED`)).body).toEqual({ count: 0, items: [] });
    // the refused interactive send must not count as a button failure: buttons still go out
    await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/send-interactive`, {
      body: 'Again',
      buttons: [{ type: 'reply', text: 'Sure' }],
    });
    await waitUntil(
      async () =>
        inbox(A)
          .filter((e) => e.chat === groupId)
          .map((e) => e.content),
      (t) => t.includes('Again [Sure]'),
    );
  });

  it('changes participants, subject and description, visible in details and members', async () => {
    ctx.sandbox.control.addPhone('15558880009', 'Zed');
    const add = await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/participants`, {
      action: 'add',
      participants: ['15558880009'],
    });
    expect(add.body).toEqual({ ok: true, action: 'add', participants: ['15558880009@s.whatsapp.net'] });
    expect((await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/promote`, { participants: [A] })).body).toEqual({
      ok: true,
      action: 'promote',
      participants: [`${A}@s.whatsapp.net`],
    });
    expect(
      (await call('PATCH', `/v1/sessions/${sessionId}/groups/${groupId}`, { subject: 'Crew 2', description: 'the crew' })).body,
    ).toEqual({ ok: true, subject: 'Crew 2', description: 'the crew' });
    const details = await call('GET', `/v1/sessions/${sessionId}/groups/${groupId}`);
    expect(details.body).toMatchObject({ subject: 'Crew 2', desc: 'the crew' });
    expect(details.body.participants).toContainEqual({ id: `${A}@s.whatsapp.net`, phoneNumber: A, lid: lid(A), admin: 'admin' });
    await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/participants`, { action: 'remove', participants: ['15558880009'] });
    const members = await call('GET', `/v1/sessions/${sessionId}/groups/${groupId}/members`);
    expect(members.body).toMatchObject({ groupId, count: 3 });
    expect(members.body.members.map((m: { id: string }) => m.id)).not.toContain('15558880009@s.whatsapp.net');
    expect(
      (await call('POST', `/v1/sessions/${sessionId}/groups/${groupId}/participants`, { action: 'kick', participants: [A] })).status,
    ).toBe(400);
  });

  it('sets admin-only and reads it back', async () => {
    expect((await call('PATCH', `/v1/sessions/${sessionId}/groups/${groupId}/privacy`, { adminOnly: true })).body).toEqual({
      ok: true,
      adminOnly: true,
    });
    expect(ctx.sandbox.control.group(groupId)?.announce).toBe(true);
    expect((await call('PATCH', `/v1/sessions/${sessionId}/groups/${groupId}/privacy`, {})).status).toBe(400);
  });

  it('lets a second session join by the invite code, then leaves', async () => {
    const { body } = await call('GET', `/v1/sessions/${sessionId}/groups/${groupId}/invite-code`);
    expect(body).toEqual({ groupId, inviteCode: expect.any(String) });
    const second = await linkSession(ctx, SECOND, 'second');
    expect((await call('POST', `/v1/sessions/${second}/groups/join`, { inviteCode: body.inviteCode })).body).toEqual({ ok: true, groupId });
    expect(ctx.sandbox.control.group(groupId)?.participants.map((p) => p.jid)).toContain(`${SECOND}@s.whatsapp.net`);
    expect((await call('DELETE', `/v1/sessions/${second}/groups/${groupId}`)).body).toEqual({ ok: true });
    expect(ctx.sandbox.control.group(groupId)?.participants.map((p) => p.jid)).not.toContain(`${SECOND}@s.whatsapp.net`);

    const notFound = { ok: false, error: { code: 'NOT_FOUND', message: 'Group not found' } };
    const send = await call('POST', `/v1/sessions/${second}/groups/${groupId}/send`, { message: 'still here?' });
    expect({ status: send.status, body: send.body }).toEqual({ status: 404, body: notFound });
    expect((await call('GET', `/v1/sessions/${second}/messages?to=${groupId}`)).body).toEqual({ count: 0, items: [] });
    expect(inbox(A).some((e) => e.content === 'still here?')).toBe(false);
    const again = await call('DELETE', `/v1/sessions/${second}/groups/${groupId}`);
    expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: notFound });
    // the group itself is untouched for those still in it
    expect(ctx.sandbox.control.group(groupId)?.participants.map((p) => p.jid)).toContain(`${ME}@s.whatsapp.net`);
  });

  it('refuses to leave a group that does not exist (404)', async () => {
    const res = await call('DELETE', `/v1/sessions/${sessionId}/groups/999999999@g.us`);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 404,
      body: { ok: false, error: { code: 'NOT_FOUND', message: 'Group not found' } },
    });
  });

  it('publishes a text status to the listed phones, with every field of the spec', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/status/send`, {
      type: 'text',
      text: 'status!',
      backgroundColor: '#112233',
      statusJidList: [`${A}@s.whatsapp.net`],
    });
    expect(res.body).toEqual({
      ok: true,
      accepted: true,
      validation: 'payload_validated',
      deliveryState: 'accepted_by_whatsapp_web',
      type: 'text',
      target: 'status@broadcast',
      recipientsCount: 1,
      statusJidList: [`${A}@s.whatsapp.net`],
      messageId: expect.any(String),
    });
    await waitUntil(async () => inbox(A).find((e) => e.chat === 'status@broadcast' && e.content === 'status!'), Boolean);
    expect(inbox(B).some((e) => e.content === 'status!')).toBe(false);
  });

  it('resolves all_contacts from the address book (on the network only)', async () => {
    await call('POST', '/v1/contacts/bulk', { contacts: [{ phone: B }, { phone: '19990007777' }] });
    const res = await call('POST', `/v1/sessions/${sessionId}/status/send`, {
      type: 'text',
      text: 'to everyone',
      audience: 'all_contacts',
    });
    expect(res.body).toMatchObject({ recipientsCount: 1, statusJidList: [`${B}@s.whatsapp.net`] });
    await waitUntil(async () => inbox(B).find((e) => e.content === 'to everyone'), Boolean);
  });

  it('refuses a status payload that breaks the rules', async () => {
    expect((await call('POST', `/v1/sessions/${sessionId}/status/send`, { type: 'text', statusJidList: [A] })).status).toBe(400);
    expect((await call('POST', `/v1/sessions/${sessionId}/status/send`, { type: 'image', statusJidList: [A] })).status).toBe(400);
    expect((await call('POST', `/v1/sessions/${sessionId}/status/schedule`, { payload: { type: 'video' }, delayMs: 10 })).status).toBe(400);
    const payload = { type: 'text', text: 'never', statusJidList: [A] };
    const cases: Array<[unknown, string]> = [
      [-1, 'must be at least 0'],
      ['100', 'must be a number of milliseconds'],
      [null, 'must be a number of milliseconds'],
      [undefined, 'is required (ms before publication)'],
    ];
    for (const [delayMs, message] of cases) {
      const res = await call('POST', `/v1/sessions/${sessionId}/status/schedule`, { payload, delayMs });
      expect(res.status, String(delayMs)).toBe(400);
      expect(res.body).toEqual({
        ok: false,
        error: { code: 'VALIDATION_FAILED', message: 'The request is not valid', details: [{ path: 'delayMs', message }] },
      });
    }
    const every = await call('POST', `/v1/sessions/${sessionId}/status/recurring`, { payload, everyMs: '60000' });
    expect(every.body.error.details).toEqual([{ path: 'everyMs', message: 'must be a number of milliseconds' }]);
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: 'never' } })).toBe(0);
  });

  it('publishes a scheduled status after its delay', async () => {
    // the spec types delayMs as a number: a fraction is accepted and rounded to whole ms
    const res = await call('POST', `/v1/sessions/${sessionId}/status/schedule`, {
      payload: { type: 'text', text: 'later status', statusJidList: [A] },
      delayMs: 399.6,
    });
    expect(res.body).toEqual({ ok: true, scheduledInMs: 400 });
    expect(inbox(A).some((e) => e.content === 'later status')).toBe(false);
    await waitUntil(async () => inbox(A).find((e) => e.content === 'later status'), Boolean);
  });

  it('answers GET /channels as decided and sends to a channel', async () => {
    const list = await call('GET', `/v1/sessions/${sessionId}/channels`);
    expect(list.body).toEqual({ ok: true, channels: [], message: expect.stringContaining('not supported') });
    const jid = '120363111111111111@newsletter';
    expect((await call('POST', `/v1/sessions/${sessionId}/channels/${jid}/send`, { text: 'post' })).body).toEqual({ ok: true });
    await waitUntil(
      async () => ctx.sandbox.control.channel(jid).map((p) => p.content),
      (c) => c.includes('post'),
    );
    expect((await call('POST', `/v1/sessions/${sessionId}/channels/not-a-channel/send`, { text: 'x' })).status).toBe(400);
  });

  it('refuses groups and statuses on a session that is not connected (409) and for another account (404)', async () => {
    const { body: idle } = await call('POST', '/v1/sessions', { name: 'idle' });
    expect((await call('GET', `/v1/sessions/${idle.id}/groups`)).status).toBe(409);
    expect((await call('POST', `/v1/sessions/${idle.id}/status/send`, { type: 'text', text: 'x', statusJidList: [A] })).status).toBe(409);
    expect((await call('POST', `/v1/sessions/${idle.id}/channels/1@newsletter/send`, { text: 'x' })).status).toBe(409);
    const other = (await ctx.app.newAccount()).apiKey;
    expect((await call('GET', `/v1/sessions/${sessionId}/groups`, undefined, other)).status).toBe(404);
    expect(
      (await call('POST', `/v1/sessions/${sessionId}/status/send`, { type: 'text', text: 'x', statusJidList: [A] }, other)).status,
    ).toBe(404);
    expect((await call('GET', `/v1/sessions/${sessionId}/channels`, undefined, other)).status).toBe(404);
  });
});
