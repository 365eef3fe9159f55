import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { TestApp } from './helpers/app.ts';

describe.each(dbKinds)('address book on %s', (kind) => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  const call = (method: string, path: string, body?: unknown, k: string = key) => http(app.baseUrl, method, path, { key: k, body });

  beforeAll(async () => {
    app = await startTestApp(kind);
    key = (await app.newAccount()).apiKey;
    otherKey = (await app.newAccount()).apiKey;
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('POST /v1/contacts', () => {
    it('creates from a phone, converting it to a JID, with 201 and the exact Contact shape', async () => {
      const res = await call('POST', '/v1/contacts', {
        phone: '15550001111',
        name: 'Alice',
        email: 'alice@example.com',
        tags: ['vip', 'Lead'],
        variables: { city: 'Paris' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        jid: '15550001111@s.whatsapp.net',
        lid: null,
        phone: '15550001111',
        name: 'Alice',
        email: 'alice@example.com',
        tags: ['vip', 'Lead'],
        variables: { city: 'Paris' },
        isBlocked: false,
      });
    });

    it('upserts by JID: fields given replace, fields left out keep their value, 200 on update', async () => {
      const res = await call('POST', '/v1/contacts', { jid: '15550001111@s.whatsapp.net', name: 'Alice B.' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Alice B.', email: 'alice@example.com', tags: ['vip', 'Lead'] });
      const list = await call('GET', '/v1/contacts?search=alice');
      expect(list.body.total).toBe(1);
    });

    it('refuses a body with neither jid nor phone, listing the failing field', async () => {
      const res = await call('POST', '/v1/contacts', { name: 'Nobody' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        ok: false,
        error: { code: 'VALIDATION_FAILED', message: expect.any(String), details: [{ path: 'jid', message: 'jid or phone is required' }] },
      });
    });

    it('refuses bad field types and values with one detail per field, and stores nothing', async () => {
      const res = await call('POST', '/v1/contacts', { jid: 'not a jid', email: 'nope', tags: 'vip' });
      expect(res.status).toBe(400);
      const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
      expect(paths).toEqual(['email', 'jid', 'tags']);
      const list = await call('GET', '/v1/contacts?search=not a jid');
      expect(list.body.total).toBe(0);
    });
  });

  describe('GET /v1/contacts/{jid}', () => {
    it('accepts the full JID or the bare number', async () => {
      const byJid = await call('GET', '/v1/contacts/15550001111@s.whatsapp.net');
      const byNumber = await call('GET', '/v1/contacts/15550001111');
      expect(byJid.status).toBe(200);
      expect(byNumber.body).toEqual(byJid.body);
    });

    it('answers 404 for an unknown contact and 400 for something that is not a JID', async () => {
      expect((await call('GET', '/v1/contacts/19990000000')).status).toBe(404);
      const bad = await call('GET', '/v1/contacts/hello');
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    });
  });

  describe('PATCH and DELETE /v1/contacts/{jid}', () => {
    it('updates only the given fields and returns the Contact', async () => {
      await call('POST', '/v1/contacts', { phone: '15550002222', name: 'Bob', tags: ['old'] });
      const res = await call('PATCH', '/v1/contacts/15550002222', { tags: ['new'], isBlocked: true });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Bob', tags: ['new'], isBlocked: true });
      expect((await call('GET', '/v1/contacts?tag=old')).body.total).toBe(0);
      expect((await call('GET', '/v1/contacts?tag=new')).body.total).toBe(1);
    });

    it('refuses unknown PATCH fields and a PATCH of a missing contact', async () => {
      expect((await call('PATCH', '/v1/contacts/15550002222', { jid: 'x' })).status).toBe(400);
      expect((await call('PATCH', '/v1/contacts/15559999999', { name: 'x' })).status).toBe(404);
    });

    it('deletes permanently with {ok: true}', async () => {
      await call('POST', '/v1/contacts', { phone: '15550003333' });
      const res = await call('DELETE', '/v1/contacts/15550003333@s.whatsapp.net');
      expect(res).toMatchObject({ status: 200, body: { ok: true } });
      expect((await call('GET', '/v1/contacts/15550003333')).status).toBe(404);
      expect((await call('DELETE', '/v1/contacts/15550003333')).status).toBe(404);
    });
  });

  describe('POST /v1/contacts/bulk', () => {
    it('counts created, updated and skipped, and reports invalid items by index', async () => {
      await call('POST', '/v1/contacts', { phone: '15551000001', name: 'Same' });
      await call('POST', '/v1/contacts', { phone: '15551000002', name: 'Before' });
      const res = await call('POST', '/v1/contacts/bulk', {
        contacts: [
          { phone: '15551000001', name: 'Same' }, // identical to the stored contact
          { phone: '15551000002', name: 'After', tags: ['bulk'] }, // updated
          { jid: '15551000003@s.whatsapp.net', name: 'New', tags: ['bulk'] }, // created
          { phone: '15551000003', name: 'Repeat' }, // repeats item 2 of this request
          { jid: 'garbage', name: 'Bad' },
          { name: 'No id' },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        created: 1,
        updated: 1,
        skipped: 2,
        errors: [
          { index: 4, jid: 'garbage', reason: expect.stringContaining('jid') },
          { index: 5, reason: expect.stringContaining('jid or phone is required') },
        ],
      });
      expect((await call('GET', '/v1/contacts/15551000002')).body).toMatchObject({ name: 'After', tags: ['bulk'] });
      expect((await call('GET', '/v1/contacts/15551000003')).body).toMatchObject({ name: 'New' });
      expect((await call('GET', '/v1/contacts?tag=bulk')).body.total).toBe(2);
    });

    it('refuses more than 500 items as a whole, storing none', async () => {
      const contacts = Array.from({ length: 501 }, (_, i) => ({ phone: `1666${String(i).padStart(7, '0')}` }));
      const res = await call('POST', '/v1/contacts/bulk', { contacts });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe('contacts');
      expect((await call('GET', '/v1/contacts?search=1666')).body.total).toBe(0);
    });

    it('imports exactly 500', async () => {
      const contacts = Array.from({ length: 500 }, (_, i) => ({ phone: `1777${String(i).padStart(7, '0')}`, tags: ['five-hundred'] }));
      const res = await call('POST', '/v1/contacts/bulk', { contacts });
      expect(res.body).toEqual({ created: 500, updated: 0, skipped: 0, errors: [] });
      expect((await call('GET', '/v1/contacts?tag=five-hundred&limit=1')).body.total).toBe(500);
    });

    it('requires the contacts array', async () => {
      expect((await call('POST', '/v1/contacts/bulk', {})).status).toBe(400);
    });
  });

  describe('GET /v1/contacts', () => {
    it('pages with defaults 1 and 50 and lowers a limit over 200 to 200', async () => {
      const first = await call('GET', '/v1/contacts?tag=five-hundred');
      expect(first.body).toMatchObject({ total: 500, page: 1, limit: 50 });
      expect(first.body.items).toHaveLength(50);
      const big = await call('GET', '/v1/contacts?tag=five-hundred&limit=1000&page=3');
      expect(big.body).toMatchObject({ total: 500, page: 3, limit: 200 });
      expect(big.body.items).toHaveLength(100);
      const ids = new Set(
        [
          ...(await call('GET', '/v1/contacts?tag=five-hundred&limit=200&page=1')).body.items,
          ...(await call('GET', '/v1/contacts?tag=five-hundred&limit=200&page=2')).body.items,
          ...big.body.items,
        ].map((c: { id: string }) => c.id),
      );
      expect(ids.size).toBe(500);
    });

    it('refuses a limit or page that is not a positive integer', async () => {
      for (const q of ['limit=0', 'limit=abc', 'page=0', 'page=1.5', 'limit=-3']) {
        const res = await call('GET', `/v1/contacts?${q}`);
        expect(res.status, q).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_FAILED');
      }
    });

    it('filters by exact, case-sensitive tag', async () => {
      expect((await call('GET', '/v1/contacts?tag=Lead')).body.total).toBe(1);
      expect((await call('GET', '/v1/contacts?tag=lead')).body.total).toBe(0);
      expect((await call('GET', '/v1/contacts?tag=Lea')).body.total).toBe(0);
    });

    it('searches name, JID, phone and email', async () => {
      await call('POST', '/v1/contacts', { phone: '15552000001', name: 'Zoé Searchable', email: 'zoe@mail.test' });
      for (const term of ['searchable', 'zoé', '15552000001', '2000001@s.whatsapp', 'zoe@mail']) {
        const res = await call('GET', `/v1/contacts?search=${encodeURIComponent(term)}`);
        expect(res.body.total, term).toBe(1);
        expect(res.body.items[0].name).toBe('Zoé Searchable');
      }
      expect((await call('GET', '/v1/contacts?search=%25')).body.total).toBe(0);
    });

    it("matches a term literally and in any case, only among the caller's contacts, and follows edits and deletes", async () => {
      await call('POST', '/v1/contacts', { phone: '15552000002', name: 'Promo 50%_off "VIP" Ügur' });
      await call('POST', '/v1/contacts', { phone: '15552000002', name: 'Promo 50%_off "VIP" Ügur' }, otherKey);
      const found = async (term: string) => {
        const res = await call('GET', `/v1/contacts?search=${encodeURIComponent(term)}`);
        expect(res.status, term).toBe(200);
        return res.body.items.map((c: { phone: string }) => c.phone);
      };
      for (const term of ['50%_off', '"vip"', 'PROMO 50', 'ügur', '" Ü']) expect(await found(term), term).toEqual(['15552000002']);
      for (const term of ['50%off', '50_off', 'promo%', 'vip"x']) expect(await found(term), term).toEqual([]);

      await call('PATCH', '/v1/contacts/15552000002', { name: 'Renamed' });
      expect(await found('promo 50')).toEqual([]);
      expect(await found('renamed')).toEqual(['15552000002']);
      await call('DELETE', '/v1/contacts/15552000002');
      expect(await found('renamed')).toEqual([]);
      expect(await found('15552000002')).toEqual([]);
      expect((await call('DELETE', '/v1/contacts/15552000002', undefined, otherKey)).status).toBe(200);
    });
  });

  describe('contact groups', () => {
    let groupId: string;

    it('creates a group with 201 and contactCount 0', async () => {
      const res = await call('POST', '/v1/contacts/groups', { name: 'Customers', description: 'paying', color: '#12ab34' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        name: 'Customers',
        description: 'paying',
        color: '#12ab34',
        isSmartGroup: false,
        contactCount: 0,
      });
      groupId = res.body.id;
    });

    it('refuses a duplicate name (409), a missing name and a bad colour (400)', async () => {
      const dup = await call('POST', '/v1/contacts/groups', { name: 'Customers' });
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe('CONFLICT');
      expect((await call('POST', '/v1/contacts/groups', { description: 'x' })).status).toBe(400);
      expect((await call('POST', '/v1/contacts/groups', { name: 'Other', color: 'red' })).status).toBe(400);
    });

    it('accepts a colour as #rgb or #rrggbb and refuses other lengths', async () => {
      const own = (await app.newAccount()).apiKey;
      const short = await call('POST', '/v1/contacts/groups', { name: 'Short colour', color: '#aBc' }, own);
      expect(short.status).toBe(201);
      expect(short.body).toEqual({
        id: expect.any(String),
        name: 'Short colour',
        description: '',
        color: '#aBc',
        isSmartGroup: false,
        contactCount: 0,
      });
      const long = await call('POST', '/v1/contacts/groups', { name: 'Long colour', color: '#A1b2C3' }, own);
      expect(long.status).toBe(201);
      expect(long.body.color).toBe('#A1b2C3');
      for (const color of ['#ab', '#abcd', '#abcde', '#abcdefa', 'abc', '#ggg']) {
        const res = await call('POST', '/v1/contacts/groups', { name: `Bad ${color}`, color }, own);
        expect(res.status, color).toBe(400);
        expect(res.body, color).toEqual({
          ok: false,
          error: { code: 'VALIDATION_FAILED', message: expect.any(String), details: [{ path: 'color', message: expect.any(String) }] },
        });
      }
      const stored = await call('GET', '/v1/contacts/groups', undefined, own);
      expect(stored.body.map((g: { name: string; color: string }) => [g.name, g.color]).sort()).toEqual([
        ['Long colour', '#A1b2C3'],
        ['Short colour', '#aBc'],
      ]);
    });

    it('adds only contacts that exist, reporting the rest', async () => {
      const res = await call('POST', `/v1/contacts/groups/${groupId}/members`, {
        jids: ['15550001111', '15550002222@s.whatsapp.net', '15559876543', 'bogus'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ok: true,
        added: 2,
        errors: [
          { jid: 'bogus', reason: 'invalid_jid' },
          { jid: '15559876543', reason: 'contact_not_found' },
        ],
      });
      const again = await call('POST', `/v1/contacts/groups/${groupId}/members`, { jids: ['15550001111'] });
      expect(again.body).toEqual({ ok: true, added: 0, errors: [{ jid: '15550001111', reason: 'already_member' }] });
      const groups = await call('GET', '/v1/contacts/groups');
      expect(groups.body).toEqual([expect.objectContaining({ id: groupId, contactCount: 2 })]);
    });

    it('removes a member but keeps the contact', async () => {
      const res = await call('DELETE', `/v1/contacts/groups/${groupId}/members/15550001111`);
      expect(res).toMatchObject({ status: 200, body: { ok: true } });
      expect((await call('GET', '/v1/contacts/15550001111')).status).toBe(200);
      expect((await call('GET', '/v1/contacts/groups')).body[0].contactCount).toBe(1);
      expect((await call('DELETE', `/v1/contacts/groups/${groupId}/members/15550001111`)).status).toBe(404);
    });

    it('answers 404 for an unknown group', async () => {
      const res = await call('POST', '/v1/contacts/groups/00000000-0000-0000-0000-000000000000/members', { jids: ['15550001111'] });
      expect(res.status).toBe(404);
    });

    it('hides everything from another account', async () => {
      expect((await call('GET', '/v1/contacts/groups', undefined, otherKey)).body).toEqual([]);
      expect((await call('GET', '/v1/contacts/15550001111', undefined, otherKey)).status).toBe(404);
      expect((await call('GET', '/v1/contacts', undefined, otherKey)).body.total).toBe(0);
      expect((await call('POST', `/v1/contacts/groups/${groupId}/members`, { jids: ['15550001111'] }, otherKey)).status).toBe(404);
      expect((await call('DELETE', `/v1/contacts/groups/${groupId}/members/15550002222`, undefined, otherKey)).status).toBe(404);
      expect((await call('PATCH', '/v1/contacts/15550001111', { name: 'hijack' }, otherKey)).status).toBe(404);
      expect((await call('DELETE', '/v1/contacts/15550001111', undefined, otherKey)).status).toBe(404);
      // the same JID is free to exist separately in the other account
      expect((await call('POST', '/v1/contacts', { phone: '15550001111', name: 'Theirs' }, otherKey)).status).toBe(201);
      expect((await call('GET', '/v1/contacts/15550001111')).body.name).toBe('Alice B.');
    });

    it('deletes a group (extension, REST and GraphQL): its memberships go, its contacts stay, another account gets 404', async () => {
      await call('POST', '/v1/contacts', { phone: '15550003333', name: 'Member' });
      const made = await call('POST', '/v1/contacts/groups', { name: 'To delete' });
      expect((await call('POST', `/v1/contacts/groups/${made.body.id}/members`, { jids: ['15550003333'] })).body.added).toBe(1);
      expect((await call('DELETE', `/v1/contacts/groups/${made.body.id}`, undefined, otherKey)).status).toBe(404);
      const res = await call('DELETE', `/v1/contacts/groups/${made.body.id}`);
      expect(res).toMatchObject({ status: 200, body: { ok: true } });
      expect((await call('GET', '/v1/contacts/groups')).body.map((g: { name: string }) => g.name)).not.toContain('To delete');
      expect((await call('GET', '/v1/contacts/15550003333')).status).toBe(200);
      expect(await app.deps.db.contactGroupMember.count({ where: { groupId: made.body.id } })).toBe(0);
      const again = await call('DELETE', `/v1/contacts/groups/${made.body.id}`);
      expect(again).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });

      const other = await call('POST', '/v1/contacts/groups', { name: 'To delete by GraphQL' });
      const mutation = 'mutation($id: ID!) { deleteContactGroup(id: $id) }';
      expect((await gql(app.baseUrl, key, mutation, { id: other.body.id })).data).toEqual({ deleteContactGroup: true });
      const gone = await gql(app.baseUrl, key, mutation, { id: other.body.id });
      expect(gone.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    });
  });

  describe('GraphQL gives the same data as REST', () => {
    it('reads contacts and groups with the REST field names, as connections with the REST totals', async () => {
      const rest = await call('GET', '/v1/contacts?tag=vip');
      const res = await gql(
        app.baseUrl,
        key,
        `query($tag: String) { contacts(tag: $tag) { totalCount edges { node { id jid lid phone name email tags variables isBlocked } } }
           contactGroups { totalCount edges { node { id name description color isSmartGroup contactCount } } } }`,
        { tag: 'vip' },
      );
      expect(res.errors).toBeUndefined();
      expect(res.data.contacts.totalCount).toBe(rest.body.total);
      expect(res.data.contacts.edges.map((e: { node: unknown }) => e.node)).toEqual(rest.body.items);
      const groups = (await call('GET', '/v1/contacts/groups')).body;
      expect(res.data.contactGroups.totalCount).toBe(groups.length);
      expect(res.data.contactGroups.edges.map((e: { node: unknown }) => e.node)).toEqual(groups);
    });

    it('writes through mutations and reads back through REST', async () => {
      const res = await gql(
        app.baseUrl,
        key,
        `mutation { upsertContact(input: { phone: "15553000001", name: "Graph", tags: ["gql"] }) { jid name tags }
           importContacts(contacts: [{ phone: "15553000002" }, { jid: "bad" }]) { created updated skipped errors { index jid reason } } }`,
      );
      expect(res.errors).toBeUndefined();
      expect(res.data.upsertContact).toEqual({ jid: '15553000001@s.whatsapp.net', name: 'Graph', tags: ['gql'] });
      expect(res.data.importContacts).toMatchObject({ created: 1, errors: [{ index: 1, jid: 'bad' }] });
      expect((await call('GET', '/v1/contacts/15553000001')).body.name).toBe('Graph');

      const group = await gql(app.baseUrl, key, `mutation { createContactGroup(name: "GQL group") { id name contactCount } }`);
      const groupId = group.data.createContactGroup.id;
      const added = await gql(
        app.baseUrl,
        key,
        `mutation($g: ID!) { addContactGroupMembers(groupId: $g, jids: ["15553000001"]) { ok added errors { jid reason } } }`,
        { g: groupId },
      );
      expect(added.data.addContactGroupMembers).toEqual({ ok: true, added: 1, errors: [] });
      const one = await gql(
        app.baseUrl,
        key,
        `{ contact(jid: "15553000001") { name groups { edges { node { name } } } } contactGroups { edges { node { name contactCount } } } }`,
      );
      expect(one.data.contact).toEqual({ name: 'Graph', groups: { edges: [{ node: { name: 'GQL group' } }] } });
      expect(one.data.contactGroups.edges).toContainEqual({ node: { name: 'GQL group', contactCount: 1 } });
    });

    it('carries the error code in extensions.code with the failing fields', async () => {
      const res = await gql(app.baseUrl, key, `mutation { upsertContact(input: { name: "x" }) { id } }`);
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'jid' }] });
      const missing = await gql(app.baseUrl, key, `{ contact(jid: "19990000001") { id } }`);
      expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const dup = await gql(app.baseUrl, key, `mutation { createContactGroup(name: "GQL group") { id } }`);
      expect(dup.errors?.[0]?.extensions?.code).toBe('CONFLICT');
      const other = await gql(app.baseUrl, otherKey, `{ contact(jid: "15553000001") { id } }`);
      expect(other.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    });
  });
});
