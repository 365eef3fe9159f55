import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDueMessage } from '../src/resolvers/scheduling.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox, waitUntil } from './helpers/sandbox.ts';

const ME = '15554440001';
const FRIENDS = ['15554440011', '15554440012', '15554440013', '15554440014', '15554440015'];

describe.each(dbKinds)('campaigns, variations, schedules, recurring and bulk sends end to end (%s)', (kind) => {
  let ctx: Linked;
  let sessionId: string;
  const call = (method: string, path: string, body?: unknown) => http(ctx.app.baseUrl, method, path, { key: ctx.key, body });
  const texts = (number: string) => ctx.sandbox.control.inbox(number).map((e) => e.content);

  beforeAll(async () => {
    ctx = await startWithSandbox(kind, { RECURRING_MIN_MS: 200, MAX_RECURRING_PER_ACCOUNT: 2 });
    sessionId = await linkSession(ctx, ME);
    for (const n of FRIENDS) ctx.sandbox.control.addPhone(n);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('runs a campaign of 5 with {name}, each recipient getting their own text once', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/campaign`, {
      contacts: FRIENDS.map((n, i) => ({ jid: `${n}@s.whatsapp.net`, ...(i < 4 ? { name: `Friend${i}` } : {}) })),
      template: 'Hi {name}!',
      delayMs: 20.5,
    });
    expect(res.body).toMatchObject({ ok: true, count: 5 });
    for (const [i, n] of FRIENDS.entries()) {
      const expected = i < 4 ? `Hi Friend${i}!` : `Hi ${n}!`;
      await waitUntil(
        async () => texts(n),
        (t) => t.includes(expected),
      );
      expect(texts(n).filter((t) => t === expected)).toHaveLength(1);
    }
    // The phone can decrypt a scheduled message a moment before its record says SENT.
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/messages?status=SENT`),
      (r) => r.body.count === 5,
    );
  });

  it('times a campaign from its first send: each message leaves delayMs after the one before', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/campaign`, {
      contacts: FRIENDS.slice(0, 3).map((n, i) => ({ jid: n, name: `S${i}` })),
      template: 'spaced {name}',
      delayMs: 1500,
    });
    expect(res.body).toMatchObject({ ok: true, count: 3 });
    const rows = await waitUntil(
      () => ctx.app.db.outgoingMessage.findMany({ where: { campaignId: res.body.campaignId } }),
      (r) => r.length === 3 && r.every((x) => x.status === 'SENT'),
      20_000,
    );
    const sentAt = rows.map((r) => r.sentAt?.getTime() ?? 0).sort((a, b) => a - b);
    expect(sentAt[1] - sentAt[0]).toBeGreaterThanOrEqual(1500);
    expect(sentAt[2] - sentAt[1]).toBeGreaterThanOrEqual(1500);
    // SENT is the server's acknowledgement; the phone decrypts a moment later.
    for (const [i, n] of FRIENDS.slice(0, 3).entries()) {
      const shown = await waitUntil(
        async () => texts(n).filter((t) => t === `spaced S${i}`),
        (t) => t.length > 0,
      );
      expect(shown).toHaveLength(1);
    }
  });

  it('arms a job that fires before its message is due again, and sends nothing', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, {
      to: FRIENDS[2],
      message: 'not before its time',
      delayMs: 30 * 24 * 3600 * 1000,
    });
    expect(res.status).toBe(200);
    const armedAgainFor = await runDueMessage(ctx.app.deps, res.body.messageId);
    expect(armedAgainFor?.toISOString()).toBe(res.body.sendAt);
    const record = await call('GET', `/v1/sessions/${sessionId}/messages/${res.body.messageId}`);
    expect(record.body).toMatchObject({ status: 'PENDING', sentAt: null });
    expect(texts(FRIENDS[2])).not.toContain('not before its time');
  });

  it('bulk-send is the same as campaign, and leaves placeholders other than {name} as written', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/bulk-send`, {
      contacts: [{ jid: FRIENDS[0] }],
      template: 'bulk {name} {constructor} {x}',
    });
    expect(res.body).toMatchObject({ ok: true, count: 1 });
    await waitUntil(
      async () => texts(FRIENDS[0]),
      (t) => t.includes(`bulk ${FRIENDS[0]} {constructor} {x}`),
    );
  });

  it('sends one random variation', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/variations`, {
      to: FRIENDS[1],
      variations: ['v-a', 'v-b', 'v-c'],
      delayMs: 10.5,
    });
    expect(res.body).toEqual({ ok: true, count: 1, sent: [expect.stringMatching(/^v-[abc]$/)] });
    await waitUntil(
      async () => texts(FRIENDS[1]),
      (t) => t.includes(res.body.sent[0]),
    );
    expect(texts(FRIENDS[1]).filter((t) => t.startsWith('v-'))).toHaveLength(1);
  });

  it('refuses a delayMs that is not a non-negative number, naming the fault', async () => {
    const bodies = {
      campaign: { contacts: [{ jid: FRIENDS[0] }], template: 'never' },
      variations: { to: FRIENDS[0], variations: ['never'] },
      schedule: { to: FRIENDS[0], message: 'never' },
      typing: { to: FRIENDS[0], text: 'never' },
    };
    for (const [route, body] of Object.entries(bodies)) {
      for (const [delayMs, message] of [
        [-1, 'must be at least 0'],
        ['100', 'must be a number of milliseconds'],
      ] as const) {
        const res = await call('POST', `/v1/sessions/${sessionId}/messages/${route}`, { ...body, delayMs });
        expect(res.status, `${route} ${delayMs}`).toBe(400);
        expect(res.body.error.details, `${route} ${delayMs}`).toEqual([{ path: 'delayMs', message }]);
      }
    }
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: 'never' } })).toBe(0);
  });

  it('refuses variations over the quota with 429 at once, without waiting delayMs or sending', async () => {
    const key = {
      accountId: (await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } })).accountId,
      day: new Date().toISOString().slice(0, 10),
    };
    const used = (await ctx.app.db.dailyUsage.findUnique({ where: { accountId_day: key } }))?.count ?? 0;
    await ctx.app.db.dailyUsage.upsert({ where: { accountId_day: key }, create: { ...key, count: 1000 }, update: { count: 1000 } });
    const started = Date.now();
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/variations`, {
      to: FRIENDS[1],
      variations: ['over-a', 'over-b'],
      delayMs: 3000,
    });
    const elapsed = Date.now() - started;
    const usageAfter = (await ctx.app.db.dailyUsage.findUniqueOrThrow({ where: { accountId_day: key } })).count;
    await ctx.app.db.dailyUsage.update({ where: { accountId_day: key }, data: { count: used } });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(elapsed).toBeLessThan(1500);
    expect(usageAfter).toBe(1000);
    await new Promise((r) => setTimeout(r, 200));
    expect(texts(FRIENDS[1]).some((t) => t.startsWith('over-'))).toBe(false);
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: { startsWith: 'over-' } } })).toBe(0);
  });

  it('schedules by delayMs: PENDING first, then SENT through the history filter', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, { to: FRIENDS[2], message: 'later', delayMs: 699.5 });
    expect(res.body).toEqual({
      ok: true,
      scheduledInMs: 700,
      sendAt: expect.stringMatching(/Z$/),
      messageId: expect.any(String),
      jobId: expect.any(String),
    });
    const pending = await call('GET', `/v1/sessions/${sessionId}/messages?status=PENDING`);
    expect(pending.body.items.map((m: { id: string }) => m.id)).toContain(res.body.messageId);
    expect(texts(FRIENDS[2])).not.toContain('later');
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/messages/${res.body.messageId}`),
      (r) => r.body.status === 'SENT',
    );
    // SENT is the server's acknowledgement; the phone decrypts a moment later.
    await waitUntil(
      async () => texts(FRIENDS[2]),
      (t) => t.includes('later'),
    );
  });

  it('schedules by sendAt (which wins over delayMs), and sends a past sendAt at once', async () => {
    const at = new Date(Date.now() + 500).toISOString();
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, {
      to: FRIENDS[3],
      message: 'at time',
      sendAt: at,
      delayMs: 60_000,
    });
    expect(res.body.sendAt).toBe(at);
    expect(res.body.scheduledInMs).toBeGreaterThan(0);
    expect(res.body.scheduledInMs).toBeLessThanOrEqual(500);
    const past = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, {
      to: FRIENDS[3],
      message: 'past',
      sendAt: '2020-01-01T00:00:00Z',
    });
    expect(past.body.scheduledInMs).toBe(0);
    await waitUntil(
      async () => texts(FRIENDS[3]),
      (t) => t.includes('past') && t.includes('at time'),
    );
  });

  it('records FAILED with a reason when delivery fails', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, { to: FRIENDS[4], message: 'will fail', delayMs: 400 });
    await call('POST', `/v1/sessions/${sessionId}/disconnect`);
    const failed = await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/messages/${res.body.messageId}`),
      (r) => r.body.status === 'FAILED',
    );
    expect(failed.body.error).toMatch(/not connected/);
    expect(failed.body.sentAt).toBeNull();
    await call('POST', `/v1/sessions/${sessionId}/connect`);
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
    );
  });

  it('fires a recurring message repeatedly, lists it, and stops when cancelled', async () => {
    const res = await call('POST', `/v1/sessions/${sessionId}/messages/recurring`, { to: FRIENDS[0], message: 'tick', everyMs: 250.4 });
    // The spec types everyMs as a number: a fraction is rounded to whole milliseconds.
    expect(res.body).toEqual({ ok: true, recurringEveryMs: 250, timerId: expect.any(String) });
    const listed = await call('GET', `/v1/sessions/${sessionId}/messages/recurring`);
    expect(listed.body.items).toEqual([expect.objectContaining({ timerId: res.body.timerId, everyMs: 250, message: 'tick' })]);
    await waitUntil(
      async () => texts(FRIENDS[0]).filter((t) => t === 'tick').length,
      (n) => n >= 2,
    );
    expect((await call('DELETE', `/v1/sessions/${sessionId}/messages/recurring/${res.body.timerId}`)).body).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 400));
    const after = texts(FRIENDS[0]).filter((t) => t === 'tick').length;
    await new Promise((r) => setTimeout(r, 700));
    expect(texts(FRIENDS[0]).filter((t) => t === 'tick').length).toBe(after);
    const flood = await call('POST', `/v1/sessions/${sessionId}/messages/recurring`, { to: FRIENDS[0], message: 'flood', everyMs: 10 });
    expect(flood.status).toBe(400);
    expect(flood.body.error.details).toEqual([{ path: 'everyMs', message: 'must be at least 200' }]);
  });

  it('refuses a recurring timer past MAX_RECURRING_PER_ACCOUNT with 409 CONFLICT, statuses included, until one is cancelled', async () => {
    const every = { everyMs: 3_600_000 };
    const first = await call('POST', `/v1/sessions/${sessionId}/messages/recurring`, { to: FRIENDS[0], message: 'hourly', ...every });
    const second = await call('POST', `/v1/sessions/${sessionId}/status/recurring`, {
      payload: { type: 'text', text: 'hourly status', statusJidList: [FRIENDS[1]] },
      ...every,
    });
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await call('POST', `/v1/sessions/${sessionId}/messages/recurring`, { to: FRIENDS[0], message: 'one too many', ...every });
    expect(third.status).toBe(409);
    expect(third.body).toEqual({
      ok: false,
      error: { code: 'CONFLICT', message: expect.stringMatching(/most recurring timers allowed \(2\)/) },
    });
    expect((await call('GET', `/v1/sessions/${sessionId}/messages/recurring`)).body.items).toHaveLength(2);
    await call('DELETE', `/v1/sessions/${sessionId}/messages/recurring/${first.body.timerId}`);
    const again = await call('POST', `/v1/sessions/${sessionId}/messages/recurring`, { to: FRIENDS[0], message: 'room again', ...every });
    expect(again.status).toBe(200);
    for (const timer of (await call('GET', `/v1/sessions/${sessionId}/messages/recurring`)).body.items) {
      await call('DELETE', `/v1/sessions/${sessionId}/messages/recurring/${timer.timerId}`);
    }
  });

  it('bulk-sends to a contact group and to a tag with personalisation, reporting blocked and unknown numbers', async () => {
    await call('POST', '/v1/contacts/bulk', {
      contacts: [
        { phone: FRIENDS[0], name: 'Ann', tags: ['vip'], variables: { city: 'Lyon' } },
        { phone: FRIENDS[1], tags: ['vip'], variables: { city: 'Nice' } },
        { phone: FRIENDS[2], name: 'Blocked', tags: ['vip'], isBlocked: true },
        { phone: '19990001111', name: 'Nobody', tags: ['vip'] },
      ],
    });
    const group = await call('POST', '/v1/contacts/groups', { name: 'VIPs' });
    await call('POST', `/v1/contacts/groups/${group.body.id}/members`, { jids: [FRIENDS[0], FRIENDS[1], FRIENDS[2], '19990001111'] });
    const byGroup = await call('POST', `/v1/sessions/${sessionId}/bulk/contact-group/${group.body.id}`, {
      message: 'G {name} {phone} {city}',
      delayMs: 10,
    });
    expect(byGroup.body).toEqual({
      ok: true,
      total: 4,
      sent: 2,
      failed: 2,
      errors: expect.arrayContaining([
        { jid: `${FRIENDS[2]}@s.whatsapp.net`, reason: 'blocked' },
        { jid: '19990001111@s.whatsapp.net', reason: 'contact_not_on_whatsapp' },
      ]),
    });
    expect(byGroup.body.errors).toHaveLength(2);
    await waitUntil(
      async () => texts(FRIENDS[1]),
      (t) => t.includes(`G ${FRIENDS[1]} ${FRIENDS[1]} Nice`),
    );
    expect(texts(FRIENDS[0])).toContain(`G Ann ${FRIENDS[0]} Lyon`);
    expect(texts(FRIENDS[2]).some((t) => t.startsWith('G '))).toBe(false);

    const byTag = await call('POST', `/v1/sessions/${sessionId}/bulk/tag/vip`, { message: 'T {name}' });
    expect(byTag.body).toMatchObject({ ok: true, total: 4, sent: 2, failed: 2 });
    expect((await call('POST', `/v1/sessions/${sessionId}/bulk/tag/VIP`, { message: 'T' })).body).toMatchObject({ total: 0, sent: 0 });
  });

  it('personalises any variable key, and counts against the quota only the contacts that will be sent', async () => {
    const [zoe, max, blocked, nobody] = ['15554440021', '15554440022', '15554440023', '19990002222'];
    for (const n of [zoe, max, blocked]) ctx.sandbox.control.addPhone(n);
    const imported = await call('POST', '/v1/contacts/bulk', {
      contacts: [
        { phone: zoe, name: 'Zoé', tags: ['q'], variables: { 'first name': 'Zoé', prénom: 'Zoé L.', 'ville/code': 'Paris 75' } },
        { phone: max, tags: ['q'], variables: { 'first name': 'Max' } },
        { phone: blocked, name: 'Blocked', tags: ['q'], isBlocked: true, variables: { 'first name': 'B' } },
        { phone: nobody, name: 'Nobody', tags: ['q'] },
      ],
    });
    expect(imported.body).toEqual({ created: 4, updated: 0, skipped: 0, errors: [] });
    const key = {
      accountId: (await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } })).accountId,
      day: new Date().toISOString().slice(0, 10),
    };
    const used = (await ctx.app.db.dailyUsage.findUnique({ where: { accountId_day: key } }))?.count ?? 0;
    const usage = async () => (await ctx.app.db.dailyUsage.findUniqueOrThrow({ where: { accountId_day: key } })).count;
    // 2 units left; 4 candidates of which 2 are reachable (one blocked, one not on WhatsApp)
    await ctx.app.db.dailyUsage.upsert({ where: { accountId_day: key }, create: { ...key, count: 998 }, update: { count: 998 } });
    const template = 'Hi {first name} / {prénom} / {ville/code} / {unknown key} / {constructor} / {phone}';
    const res = await call('POST', `/v1/sessions/${sessionId}/bulk/tag/q`, { message: template });
    const afterFirst = await usage();
    const refused = await call('POST', `/v1/sessions/${sessionId}/bulk/tag/q`, { message: 'second {phone}' });
    const afterSecond = await usage();
    await ctx.app.db.dailyUsage.update({ where: { accountId_day: key }, data: { count: used } });

    expect(res.status).toBe(200);
    // contacts imported together share createdAt, so their order (and that of errors) follows their ids
    const byJid = (a: { jid: string }, b: { jid: string }) => a.jid.localeCompare(b.jid);
    expect({ ...res.body, errors: [...res.body.errors].sort(byJid) }).toEqual({
      ok: true,
      total: 4,
      sent: 2,
      failed: 2,
      errors: [
        { jid: `${blocked}@s.whatsapp.net`, reason: 'blocked' },
        { jid: `${nobody}@s.whatsapp.net`, reason: 'contact_not_on_whatsapp' },
      ],
    });
    expect(afterFirst).toBe(1000);
    await waitUntil(
      async () => texts(max),
      (t) => t.some((x) => x.startsWith('Hi ')),
    );
    await waitUntil(
      async () => texts(zoe),
      (t) => t.some((x) => x.startsWith('Hi ')),
    );
    expect(texts(zoe)).toEqual([`Hi Zoé / Zoé L. / Paris 75 / {unknown key} / {constructor} / ${zoe}`]);
    expect(texts(max)).toEqual([`Hi Max / {prénom} / {ville/code} / {unknown key} / {constructor} / ${max}`]);

    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(afterSecond).toBe(1000);
    await new Promise((r) => setTimeout(r, 200));
    expect(texts(blocked)).toEqual([]);
    expect(texts(zoe)).toHaveLength(1);
    expect(texts(max)).toHaveLength(1);
    expect(await ctx.app.db.outgoingMessage.count({ where: { content: { startsWith: 'second ' } } })).toBe(0);
  });
});
