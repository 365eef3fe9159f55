import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { gql, http, startTestApp } from './helpers/app.ts';
import type { TestApp } from './helpers/app.ts';

const errorBody = (code: string) => ({ ok: false, error: { code, message: expect.any(String) } });

describe('service platform: auth, errors, health, GraphQL limits', () => {
  let app: TestApp;
  let account: { id: string; apiKey: string; email: string };

  beforeAll(async () => {
    app = await startTestApp('sqlite', { BODY_LIMIT: '2kb', GRAPHQL_MAX_DEPTH: 2, GRAPHQL_MAX_COMPLEXITY: 200 });
    account = await app.newAccount('owner@example.com');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('serves /healthz and /readyz without a key', async () => {
    expect(await http(app.baseUrl, 'GET', '/healthz')).toMatchObject({ status: 200, body: { ok: true } });
    expect(await http(app.baseUrl, 'GET', '/readyz')).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('GET /v1/accounts/me returns the account with the key presented', async () => {
    const res = await http(app.baseUrl, 'GET', '/v1/accounts/me', { key: account.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: account.id, email: 'owner@example.com', apiKey: account.apiKey, createdAt: expect.any(String) });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
  });

  it('stores keys only as hashes', async () => {
    const row = await app.db.account.findUniqueOrThrow({ where: { id: account.id } });
    expect(JSON.stringify(row)).not.toContain(account.apiKey);
  });

  it('answers 401 UNAUTHENTICATED the same way for a missing and an unknown key', async () => {
    const missing = await http(app.baseUrl, 'GET', '/v1/contacts');
    const unknown = await http(app.baseUrl, 'GET', '/v1/contacts', { key: 'wak_not-a-real-key' });
    expect(missing).toMatchObject({ status: 401, body: errorBody('UNAUTHENTICATED') });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(missing.body);
  });

  it('answers 404 NOT_FOUND in JSON for unknown routes, inside and outside /v1', async () => {
    expect(await http(app.baseUrl, 'GET', '/v1/nothing-here', { key: account.apiKey })).toMatchObject({
      status: 404,
      body: errorBody('NOT_FOUND'),
    });
    expect(await http(app.baseUrl, 'GET', '/elsewhere')).toMatchObject({ status: 404, body: errorBody('NOT_FOUND') });
  });

  it('answers 400 INVALID_JSON for malformed JSON, with no stack trace or HTML', async () => {
    const res = await http(app.baseUrl, 'POST', '/v1/contacts', {
      key: account.apiKey,
      rawBody: '{"phone": "1555',
      headers: { 'content-type': 'application/json' },
    });
    expect(res).toMatchObject({ status: 400, body: errorBody('INVALID_JSON') });
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js)|<html/i);
  });

  it('answers 415 for a body that is not application/json', async () => {
    const res = await http(app.baseUrl, 'POST', '/v1/contacts', {
      key: account.apiKey,
      rawBody: 'phone=15550001111',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res).toMatchObject({ status: 415, body: errorBody('UNSUPPORTED_MEDIA_TYPE') });
  });

  it('answers 413 for a body over the configured limit', async () => {
    const res = await http(app.baseUrl, 'POST', '/v1/contacts', {
      key: account.apiKey,
      body: { phone: '15550001111', name: 'x'.repeat(4000) },
    });
    expect(res).toMatchObject({ status: 413, body: errorBody('PAYLOAD_TOO_LARGE') });
  });

  it('echoes a request id as x-request-id, generating one when none is given', async () => {
    const given = await http(app.baseUrl, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const generated = await http(app.baseUrl, 'GET', '/v1/accounts/me', { key: account.apiKey });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  describe('GraphQL', () => {
    it('refuses an operation without a valid key with UNAUTHENTICATED', async () => {
      const none = await gql(app.baseUrl, undefined, '{ me { id } }');
      expect(none.status).toBe(401);
      expect(none.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect((await gql(app.baseUrl, 'wak_wrong', '{ me { id } }')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });

    it('answers a request body that is not JSON with INVALID_JSON and a request without a query with VALIDATION_FAILED', async () => {
      const post = (rawBody: string) =>
        http(app.baseUrl, 'POST', '/graphql', { key: account.apiKey, rawBody, headers: { 'content-type': 'application/json' } });
      expect(await post('{bad')).toMatchObject({
        status: 400,
        body: { errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'INVALID_JSON' } }] },
      });
      for (const [rawBody, message] of [
        ['{}', 'Must provide query string.'],
        ['{"query": 5}', 'Expected "query" param to be a string, but given number.'],
      ]) {
        const res = await post(rawBody ?? '');
        expect(res.status, rawBody).toBe(400);
        expect(res.body, rawBody).toEqual({
          errors: [{ message, extensions: { code: 'VALIDATION_FAILED', details: [{ path: '(request)', message }] } }],
        });
      }
    });

    it('checks the key before the query: an invalid query without a key is 401, not a validation error', async () => {
      for (const query of ['{ me { id ', '{ nosuchfield }']) {
        const res = await gql(app.baseUrl, undefined, query);
        expect(res.status, query).toBe(401);
        expect(
          res.errors?.map((e) => e.extensions?.code),
          query,
        ).toEqual(['UNAUTHENTICATED']);
      }
    });

    it('returns the same account as REST', async () => {
      const res = await gql(app.baseUrl, account.apiKey, '{ me { id email apiKey createdAt } }');
      const rest = await http(app.baseUrl, 'GET', '/v1/accounts/me', { key: account.apiKey });
      expect(res.data.me).toEqual(rest.body);
    });

    it('serves GraphiQL to a browser', async () => {
      const res = await fetch(`${app.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('graphiql');
    });

    it('refuses a query deeper than the limit before running it', async () => {
      const deep = '{ contacts { edges { node { id } } } }';
      const res = await gql(app.baseUrl, account.apiKey, deep);
      expect(res.data ?? null).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
      expect(res.errors?.[0]?.message).toMatch(/depth/i);
    });

    it('refuses a query over the complexity limit', async () => {
      const wide = `{ ${Array.from({ length: 60 }, (_, i) => `c${i}: me { id email apiKey }`).join(' ')} }`;
      const res = await gql(app.baseUrl, account.apiKey, wide);
      expect(res.data ?? null).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    });

    it('keeps syntax errors readable and masks nothing of ours', async () => {
      const res = await gql(app.baseUrl, account.apiKey, '{ me { id ');
      expect(res.errors?.[0]?.message).toMatch(/Syntax Error/);
      expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    });

    it('accepts graphql-ws connections only with the key in connectionParams', async () => {
      const attempt = (params: Record<string, string>) =>
        new Promise<string>((resolve) => {
          const client = createClient({
            url: `${app.baseUrl.replace('http', 'ws')}/graphql`,
            webSocketImpl: WebSocket,
            retryAttempts: 0,
            lazy: false,
            connectionParams: params,
            on: {
              connected: () => {
                resolve('connected');
                void client.dispose();
              },
              closed: (event) => {
                resolve(`closed ${(event as { code: number }).code}`);
              },
            },
          });
        });
      expect(await attempt({ 'x-api-key': account.apiKey })).toBe('connected');
      expect(await attempt({})).toBe('closed 4403');
      expect(await attempt({ 'x-api-key': 'wak_wrong' })).toBe('closed 4403');
    });
  });
});
