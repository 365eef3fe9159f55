import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JID_MESSAGE } from '../src/resolvers/jids.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';

const NUL = 'must not contain a NUL character';

const invalid = (details: Array<{ path: string; message: string }>, message = 'The request is not valid') => ({
  ok: false,
  error: { code: 'VALIDATION_FAILED', message, details },
});

const badPath = invalid([{ path: 'path', message: 'contains a malformed percent-encoding' }], 'The request path is not valid');

describe.each(dbKinds)('request validation at the edges (%s)', (kind) => {
  let app: TestApp;
  let key: string;
  let sessionId: string;
  const call = (method: string, path: string, options: { body?: unknown; rawBody?: string; key?: string } = {}) =>
    http(app.baseUrl, method, path, {
      key: 'key' in options ? options.key : key,
      ...options,
      ...(options.rawBody !== undefined ? { headers: { 'content-type': 'application/json' } } : {}),
    });
  const snapshot = async () => ({
    sessions: (await call('GET', '/v1/sessions')).body,
    contacts: (await call('GET', '/v1/contacts?limit=200')).body,
    messages: (await call('GET', `/v1/sessions/${sessionId}/messages`)).body,
  });

  beforeAll(async () => {
    // On PostgreSQL the several-nodes layer is on, as `npm start` runs there: it reads the session id first.
    app = await startTestApp(kind, {}, {}, { clustered: true });
    key = (await app.newAccount()).apiKey;
    sessionId = (await call('POST', '/v1/sessions', { body: { name: 'main' } })).body.id;
    expect((await call('POST', '/v1/contacts', { body: { phone: '15550001111', name: 'Ann', variables: { a: 'b' } } })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('path parameters', () => {
    it('are decoded once: an encoded % is a literal % and is refused as a JID, group id or channel', async () => {
      const before = await snapshot();
      expect(await call('GET', '/v1/contacts/%25')).toMatchObject({
        status: 400,
        body: invalid([{ path: 'jid', message: JID_MESSAGE }], 'Invalid JID'),
      });
      // %2540 is "%40" after Express's decode; decoded again it became "@" and deleted the contact.
      expect(await call('DELETE', '/v1/contacts/15550001111%2540s.whatsapp.net')).toMatchObject({
        status: 400,
        body: invalid([{ path: 'jid', message: JID_MESSAGE }], 'Invalid JID'),
      });
      expect(await call('GET', `/v1/sessions/${sessionId}/groups/120363%2540g.us`)).toMatchObject({
        status: 400,
        body: invalid([{ path: 'groupId', message: `must be a group JID (<id>@g.us); ${JID_MESSAGE}` }], 'Invalid group id'),
      });
      expect(await call('POST', `/v1/sessions/${sessionId}/channels/%25/send`, { body: { text: 'hi' } })).toMatchObject({
        status: 400,
        body: invalid([{ path: 'channelJid', message: 'must be a channel JID (<id>@newsletter)' }], 'Invalid channel JID'),
      });
      expect(await snapshot()).toEqual(before);
    });

    it('still accept a once-encoded JID', async () => {
      const res = await call('GET', '/v1/contacts/15550001111%40s.whatsapp.net');
      expect(res.status).toBe(200);
      expect(res.body.jid).toBe('15550001111@s.whatsapp.net');
    });

    it('answer 400 VALIDATION_FAILED for a malformed percent-encoding, after the key', async () => {
      const before = await snapshot();
      expect(await call('GET', '/v1/sessions/%E0%A4%A')).toMatchObject({ status: 400, body: badPath });
      expect(await call('GET', '/v1/contacts/%ZZ')).toMatchObject({ status: 400, body: badPath });
      expect(await call('PATCH', '/v1/contacts/%ZZ', { body: { name: 'x' } })).toMatchObject({ status: 400, body: badPath });
      expect(await call('DELETE', `/v1/sessions/${sessionId}/groups/%E0%A4%A`)).toMatchObject({ status: 400, body: badPath });
      expect((await call('GET', '/v1/contacts/%ZZ', { key: undefined })).status).toBe(401);
      expect(await snapshot()).toEqual(before);
    });

    it('answer a malformed escape in the session id 400 on every route under it, after the key', async () => {
      const before = await snapshot();
      for (const id of ['%', '%ZZ', '%ED%A0%80', '%E0%A4%A']) {
        expect(await call('GET', `/v1/sessions/${id}`)).toMatchObject({ status: 400, body: badPath });
        expect(await call('GET', `/v1/sessions/${id}/status`)).toMatchObject({ status: 400, body: badPath });
        expect(await call('POST', `/v1/sessions/${id}/send`, { body: { to: '15550001111', message: 'hi' } })).toMatchObject({
          status: 400,
          body: badPath,
        });
        expect(await call('DELETE', `/v1/sessions/${id}`)).toMatchObject({ status: 400, body: badPath });
        expect((await call('GET', `/v1/sessions/${id}/status`, { key: undefined })).status).toBe(401);
      }
      expect(await snapshot()).toEqual(before);
    });

    it('answer a well-formed id that names no session 404', async () => {
      for (const id of ['not-a-session', '00000000-0000-4000-8000-000000000000', 'caf%C3%A9']) {
        expect(await call('GET', `/v1/sessions/${id}`)).toMatchObject({
          status: 404,
          body: { ok: false, error: { code: 'NOT_FOUND' } },
        });
        expect(await call('POST', `/v1/sessions/${id}/send`, { body: { to: '15550001111', message: 'hi' } })).toMatchObject({
          status: 404,
          body: { ok: false, error: { code: 'NOT_FOUND' } },
        });
      }
    });
  });

  describe('NUL characters', () => {
    it('are refused in bodies, naming the field, and nothing is stored', async () => {
      const before = await snapshot();
      expect(await call('POST', '/v1/sessions', { body: { name: 'a\u0000b' } })).toMatchObject({
        status: 400,
        body: invalid([{ path: 'name', message: NUL }]),
      });
      expect(
        await call('POST', '/v1/contacts', { body: { phone: '15550002222', name: 'x\u0000', tags: ['ok', 't\u0000'] } }),
      ).toMatchObject({
        status: 400,
        body: invalid([
          { path: 'name', message: NUL },
          { path: 'tags[1]', message: NUL },
        ]),
      });
      expect(await call('PATCH', '/v1/contacts/15550001111', { body: { variables: { 'k\u0000': 'v' } } })).toMatchObject({
        status: 400,
        body: invalid([{ path: 'variables', message: `keys ${NUL}` }]),
      });
      // Other broken fields of the same body are still listed, once each.
      expect(await call('POST', '/v1/contacts', { body: { phone: '1\u0000', email: 'nope' } })).toMatchObject({
        status: 400,
        body: invalid([
          { path: 'phone', message: NUL },
          { path: 'email', message: 'Invalid email address' },
        ]),
      });
      expect(await snapshot()).toEqual(before);
    });

    it('make only their own item of a bulk import an error; the rest is imported', async () => {
      const res = await call('POST', '/v1/contacts/bulk', {
        body: {
          contacts: [
            { phone: '15550003331', name: 'fine' },
            { jid: '15550003332@s.whatsapp.net', name: 'bad\u0000' },
          ],
        },
      });
      expect(res).toMatchObject({
        status: 200,
        body: { created: 1, updated: 0, skipped: 0, errors: [{ index: 1, jid: '15550003332@s.whatsapp.net', reason: `name: ${NUL}` }] },
      });
      expect((await call('GET', '/v1/contacts/15550003331')).body.name).toBe('fine');
      expect((await call('GET', '/v1/contacts/15550003332')).status).toBe(404);
      expect((await call('DELETE', '/v1/contacts/15550003331')).status).toBe(200);
    });

    it('are refused in path and query values', async () => {
      expect(await call('GET', '/v1/sessions/ab%00c')).toMatchObject({ status: 400, body: invalid([{ path: 'path', message: NUL }]) });
      expect(await call('DELETE', '/v1/contacts/1555%00')).toMatchObject({ status: 400, body: invalid([{ path: 'path', message: NUL }]) });
      expect(await call('GET', '/v1/sessions/status?sessionId=a%00b')).toMatchObject({
        status: 400,
        body: invalid([{ path: 'sessionId', message: NUL }]),
      });
      expect(await call('GET', `/v1/sessions/${sessionId}%00`)).toMatchObject({
        status: 400,
        body: invalid([{ path: 'path', message: NUL }]),
      });
      expect(
        await call('POST', '/v1/sessions/api/send', { body: { sessionId: `${sessionId}\u0000`, to: '15550001111', message: 'hi' } }),
      ).toMatchObject({ status: 400, body: invalid([{ path: 'sessionId', message: NUL }]) });
      expect(await call('GET', '/v1/contacts?search=a%00&tag=x%00')).toMatchObject({
        status: 400,
        body: invalid([
          { path: 'search', message: NUL },
          { path: 'tag', message: NUL },
        ]),
      });
      // An escaped percent sign followed by 00 is text, not NUL.
      expect((await call('GET', '/v1/contacts?search=%2500')).status).toBe(200);
    });

    it('are refused over GraphQL, in literals and in variables', async () => {
      const before = await snapshot();
      const literal = await gql(app.baseUrl, key, '{ session(id: "a\\u0000b") { id } }');
      expect(literal.data).toBeNull();
      expect(literal.errors).toEqual([
        { message: 'The request is not valid', extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'id', message: NUL }] } },
      ]);
      const variable = await gql(app.baseUrl, key, 'mutation($n: String!) { createSession(name: $n) { id } }', { n: 'a\u0000' });
      expect(variable.errors).toEqual([
        {
          message: 'The request is not valid',
          extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'variables.n', message: NUL }] },
        },
      ]);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('limit, page and waitMs', () => {
    it('refuse anything but decimal digits', async () => {
      for (const [query, path] of [
        ['limit=0x10', 'limit'],
        ['limit=1e1', 'limit'],
        ['limit=%201', 'limit'],
        ['limit=', 'limit'],
        ['limit=%2B5', 'limit'],
        ['page=0x1', 'page'],
        ['page=1.0', 'page'],
      ]) {
        expect({ query, ...(await call('GET', `/v1/contacts?${query}`)) }).toMatchObject({
          query,
          status: 400,
          body: invalid([{ path, message: 'must be an integer' }]),
        });
      }
      for (const query of ['waitMs=', 'waitMs=0x10', 'waitMs=1e3', 'waitMs=%200']) {
        expect({ query, ...(await call('GET', `/v1/sessions/${sessionId}/incoming?${query}`)) }).toMatchObject({
          query,
          status: 400,
          body: invalid([{ path: 'waitMs', message: 'must be an integer' }]),
        });
      }
    });

    it('keep defaults, minimums and the lowering to the maximum', async () => {
      expect((await call('GET', '/v1/contacts')).body).toMatchObject({ page: 1, limit: 50 });
      expect((await call('GET', '/v1/contacts?limit=7&page=2')).body).toMatchObject({ page: 2, limit: 7 });
      expect((await call('GET', '/v1/contacts?limit=1000')).body).toMatchObject({ limit: 200 });
      expect((await call('GET', '/v1/contacts?limit=99999999999999999999')).body).toMatchObject({ limit: 200 });
      expect(await call('GET', '/v1/contacts?limit=0')).toMatchObject({
        status: 400,
        body: invalid([{ path: 'limit', message: 'must be at least 1' }]),
      });
      expect(await call('GET', `/v1/sessions/${sessionId}/incoming?waitMs=0&limit=5`)).toMatchObject({
        status: 200,
        body: { count: 0, items: [] },
      });
      // A connection's `first` above the maximum is lowered too, not refused.
      const graph = await gql(app.baseUrl, key, 'query($first: Int) { contacts(first: $first) { totalCount } }', { first: 1000 });
      expect(graph).toEqual({ status: 200, data: { contacts: { totalCount: expect.any(Number) } } });
    });
  });

  describe('GraphQL refusals', () => {
    const refusal = (message: string, path: string, status = 200) => ({
      status,
      errors: [{ message, locations: expect.any(Array), extensions: { code: 'VALIDATION_FAILED', details: [{ path, message }] } }],
    });

    it('carry VALIDATION_FAILED for validation, syntax and variable errors', async () => {
      const before = await snapshot();
      const enumValue = 'Value "QR_READY" does not exist in "SettableSessionStatus" enum.';
      expect(await gql(app.baseUrl, key, `mutation { setSessionStatus(id: "${sessionId}", status: QR_READY) { id } }`)).toEqual(
        refusal(enumValue, 'query'),
      );
      expect(await gql(app.baseUrl, key, '{ me { id ')).toEqual(refusal('Syntax Error: Expected Name, found <EOF>.', 'query'));
      // Was a 500 INTERNAL: graphql's own refusal of a variable value was taken for a crash.
      expect(await gql(app.baseUrl, key, 'query($l: Int!) { contacts(first: $l) { totalCount } }', { l: 'x' })).toEqual(
        refusal('Variable "$l" got invalid value "x"; Int cannot represent non-integer value: "x"', 'variables', 400),
      );
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('bodies that are JSON but not objects', () => {
    it('reach validation and answer VALIDATION_FAILED', async () => {
      const before = await snapshot();
      for (const [raw, type] of [
        ['null', 'null'],
        ['42', 'number'],
        ['"x"', 'string'],
        ['[]', 'array'],
      ]) {
        for (const [method, path] of [
          ['POST', '/v1/sessions'],
          ['POST', '/v1/contacts'],
          ['PATCH', `/v1/sessions/${sessionId}`],
          ['POST', `/v1/sessions/${sessionId}/send`],
        ]) {
          expect({ raw, path, ...(await call(method, path, { rawBody: raw })) }).toMatchObject({
            raw,
            path,
            status: 400,
            body: invalid([{ path: '(body)', message: `Invalid input: expected object, received ${type}` }]),
          });
        }
      }
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('OPTIONS', () => {
    it('answers 204 with Allow and no body, and JSON errors otherwise', async () => {
      const collection = await call('OPTIONS', '/v1/sessions');
      expect(collection.status).toBe(204);
      expect(collection.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(collection.headers.get('content-type')).toBeNull();
      expect(collection.body).toBeUndefined();
      const item = await call('OPTIONS', `/v1/sessions/${sessionId}`);
      expect(item.status).toBe(204);
      expect(item.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH');
      const unknown: Json = await call('OPTIONS', '/v1/nothing-here');
      expect(unknown).toMatchObject({ status: 404, body: { ok: false, error: { code: 'NOT_FOUND' } } });
      expect(await call('OPTIONS', '/v1/sessions', { key: undefined })).toMatchObject({
        status: 401,
        body: { ok: false, error: { code: 'UNAUTHENTICATED' } },
      });
    });
  });
});
