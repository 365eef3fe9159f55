import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';

/** Identical requests sent at once: on PostgreSQL they really overlap, so the losers meet the winner's row. */
const ROUNDS = 3;
const AT_ONCE = 4;

describe.each(dbKinds)('address book under identical concurrent requests on %s', (kind) => {
  let app: TestApp;
  let key: string;
  let accountId: string;
  const call = (method: string, path: string, body?: unknown) => http(app.baseUrl, method, path, { key, body });
  const race = (method: string, path: string, body?: unknown) =>
    Promise.all(Array.from({ length: AT_ONCE }, () => call(method, path, body)));
  const statuses = (results: Array<{ status: number }>) => results.map((r) => r.status).sort();

  beforeAll(async () => {
    app = await startTestApp(kind);
    const account = await app.newAccount();
    key = account.apiKey;
    accountId = account.id;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('creates a contact group once and answers 409 CONFLICT to the others', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const name = `Race${round}`;
      const results = await race('POST', '/v1/contacts/groups', { name });
      expect(statuses(results)).toEqual([201, 409, 409, 409]);
      const created = results.find((r) => r.status === 201);
      expect(created?.body).toEqual({ id: expect.any(String), name, description: '', color: '', isSmartGroup: false, contactCount: 0 });
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body).toEqual({ ok: false, error: { code: 'CONFLICT', message: `A contact group named "${name}" already exists` } });
      }
      const stored = await app.db.contactGroup.findMany({ where: { accountId, name } });
      expect(stored.map((g) => g.id)).toEqual([created?.body.id]);
    }
  });

  it('upserts a contact once (201) and answers the others 200 with the same contact', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const phone = `1555700000${round}`;
      const results = await race('POST', '/v1/contacts', { phone, name: 'Racer', tags: ['race'] });
      expect(statuses(results)).toEqual([200, 200, 200, 201]);
      const expected = {
        id: expect.any(String),
        jid: `${phone}@s.whatsapp.net`,
        lid: null,
        phone,
        name: 'Racer',
        email: '',
        tags: ['race'],
        variables: {},
        isBlocked: false,
      };
      for (const r of results) expect(r.body).toEqual(expected);
      const rows = await app.db.contact.findMany({ where: { accountId, jid: `${phone}@s.whatsapp.net` } });
      expect(rows).toHaveLength(1);
      expect(new Set(results.map((r) => r.body.id))).toEqual(new Set([rows[0]?.id]));
      expect(await app.db.contactTag.findMany({ where: { contactId: rows[0]?.id }, select: { tag: true } })).toEqual([{ tag: 'race' }]);
    }
  });

  it('adds a group member once and reports already_member to the others', async () => {
    const group = await call('POST', '/v1/contacts/groups', { name: 'Members race' });
    expect(group.status).toBe(201);
    for (let round = 0; round < ROUNDS; round += 1) {
      const phone = `1555710000${round}`;
      expect((await call('POST', '/v1/contacts', { phone })).status).toBe(201);
      const results = await race('POST', `/v1/contacts/groups/${group.body.id}/members`, { jids: [phone] });
      expect(statuses(results)).toEqual([200, 200, 200, 200]);
      const bodies = results.map((r) => r.body as Json);
      expect(bodies.filter((b) => b.added === 1)).toEqual([{ ok: true, added: 1, errors: [] }]);
      expect(bodies.filter((b) => b.added !== 1)).toEqual(
        Array.from({ length: AT_ONCE - 1 }, () => ({ ok: true, added: 0, errors: [{ jid: phone, reason: 'already_member' }] })),
      );
    }
    expect(await app.db.contactGroupMember.count({ where: { groupId: group.body.id } })).toBe(ROUNDS);
  });

  it('bulk-imports the same contact once and counts it skipped for the others', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const phone = `1555720000${round}`;
      const results = await race('POST', '/v1/contacts/bulk', { contacts: [{ phone, name: 'Bulk racer', tags: ['bulk-race'] }] });
      expect(statuses(results)).toEqual([200, 200, 200, 200]);
      const bodies = results.map((r) => r.body as Json);
      expect(bodies.filter((b) => b.created === 1)).toEqual([{ created: 1, updated: 0, skipped: 0, errors: [] }]);
      expect(bodies.filter((b) => b.created !== 1)).toEqual(
        Array.from({ length: AT_ONCE - 1 }, () => ({ created: 0, updated: 0, skipped: 1, errors: [] })),
      );
      const rows = await app.db.contact.findMany({ where: { accountId, jid: `${phone}@s.whatsapp.net` } });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ phone, name: 'Bulk racer', tags: '["bulk-race"]' });
      expect(await app.db.contactTag.findMany({ where: { contactId: rows[0]?.id }, select: { tag: true } })).toEqual([
        { tag: 'bulk-race' },
      ]);
    }
  });

  it('deletes a contact once and answers 404 NOT_FOUND to the others', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const phone = `1555730000${round}`;
      expect((await call('POST', '/v1/contacts', { phone, tags: ['gone'] })).status).toBe(201);
      const results = await race('DELETE', `/v1/contacts/${phone}`);
      expect(statuses(results)).toEqual([200, 404, 404, 404]);
      expect(results.find((r) => r.status === 200)?.body).toEqual({ ok: true });
      for (const r of results.filter((x) => x.status === 404)) {
        expect(r.body).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'Contact not found' } });
      }
      expect(await app.db.contact.count({ where: { accountId, jid: `${phone}@s.whatsapp.net` } })).toBe(0);
    }
    expect(await app.db.contactTag.count({ where: { accountId, tag: 'gone' } })).toBe(0);
  });
});
