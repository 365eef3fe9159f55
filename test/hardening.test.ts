import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { getIntrospectionQuery } from 'graphql';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rotateApiKey } from '../src/resolvers/accounts.ts';
import { campaignTopic } from '../src/resolvers/topics.ts';
import { dbKinds, gql, http } from './helpers/app.ts';
import type { TestApp } from './helpers/app.ts';
import { startTestApp } from './helpers/app.ts';
import { waitUntil } from './helpers/sandbox.ts';

interface Socket {
  client: Client;
  /** the close code, once the server closed the connection */
  closed: () => number | null;
  connected: Promise<void>;
}

const openSocket = (app: TestApp, key: string): Socket => {
  let code: number | null = null;
  let onConnected: () => void = () => undefined;
  const connected = new Promise<void>((resolve) => {
    onConnected = resolve;
  });
  const client = createClient({
    url: `${app.baseUrl.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    connectionParams: { 'x-api-key': key },
    on: {
      connected: () => onConnected(),
      closed: (event) => {
        code = (event as { code: number }).code;
        onConnected();
      },
    },
  });
  return { client, closed: () => code, connected };
};

type Frame = { data?: unknown; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };

/** Subscribes and records every frame; `refused` settles with the errors of an operation refused at once. */
const follow = (socket: Socket, query: string, variables: Record<string, unknown> = {}) => {
  const frames: Frame[] = [];
  let errors: Frame['errors'] | undefined;
  const stop = socket.client.subscribe(
    { query, variables },
    {
      next: (frame) => {
        frames.push(frame as Frame);
      },
      error: (err) => {
        errors = Array.isArray(err) ? (err as Frame['errors']) : [{ message: String(err) }];
      },
      complete: () => undefined,
    },
  );
  return { frames, errors: () => errors, stop };
};

const codeOf = (res: { errors?: Array<{ extensions?: Record<string, unknown> }> }) => res.errors?.[0]?.extensions?.code;

describe.each(dbKinds)('hardening: no request, client or tenant can hurt the others (%s)', (kind) => {
  let app: TestApp;
  let key: string;
  let other: string;

  beforeAll(async () => {
    // On PostgreSQL with the several-nodes layer on, as `npm start` runs there: it reads session ids first.
    app = await startTestApp(
      kind,
      {
        GRAPHQL_BODY_LIMIT: '200kb',
        MAX_SUBSCRIPTIONS_PER_SOCKET: 3,
        MAX_SUBSCRIPTIONS_PER_ACCOUNT: 5,
        MAX_CONNECTIONS_PER_KEY: 3,
        MAX_SESSIONS_PER_ACCOUNT: 2,
      },
      {},
      { clustered: true },
    );
    key = (await app.newAccount()).apiKey;
    other = (await app.newAccount()).apiKey;
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('GraphQL requests', () => {
    it('refuses a body over GRAPHQL_BODY_LIMIT with 413 PAYLOAD_TOO_LARGE, the same code as REST', async () => {
      const res = await gql(app.baseUrl, key, `{ me { id } } # ${'x'.repeat(210 * 1024)}`);
      expect(res.status).toBe(413);
      expect(codeOf(res)).toBe('PAYLOAD_TOO_LARGE');
      const small = await gql(app.baseUrl, key, `{ me { id } } # ${'x'.repeat(100 * 1024)}`);
      expect(small.status).toBe(200);
      expect(small.errors).toBeUndefined();
    });

    // 36 MB of queries: seconds on an idle machine, more on a busy one; the assertion is on memory, not time.
    it('keeps memory bounded under a stream of distinct large queries (the parse cache holds at most 2 MB of query text)', {
      timeout: 120_000,
    }, async () => {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      const heap = () => {
        gc();
        gc();
        return process.memoryUsage().heapUsed;
      };
      const before = heap();
      // 200 distinct queries of 180 KB: 36 MB of text, which an unbounded cache would keep.
      for (let i = 0; i < 200; i++) {
        const res = await gql(app.baseUrl, key, `{ me { id } } # ${i} ${'z'.repeat(180 * 1024)}`);
        expect(res.errors).toBeUndefined();
      }
      const grown = heap() - before;
      expect(grown).toBeLessThan(15 * 1024 * 1024);
    });

    it('counts introspection in depth: a deep walk through __schema is refused', async () => {
      let ofType = 'name';
      for (let i = 0; i < 20; i++) ofType = `ofType { ${ofType} }`;
      const res = await gql(app.baseUrl, key, `{ __schema { types { fields { type { ${ofType} } } } } }`);
      expect(res.data ?? null).toBeNull();
      expect(res.errors?.[0]).toEqual({
        message: expect.stringMatching(/depth limit of 15 exceeded/),
        extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'query', message: expect.any(String) }] },
      });
      // Its cost is over the limit too; every refusal says so in the same code.
      expect(res.errors?.map((e) => e.extensions?.code)).toEqual(res.errors?.map(() => 'VALIDATION_FAILED'));
    });

    it('counts every alias, __typename and __schema included', async () => {
      const typenames = await gql(app.baseUrl, key, `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`);
      expect(typenames.data ?? null).toBeNull();
      expect(codeOf(typenames)).toBe('VALIDATION_FAILED');
      expect(typenames.errors?.[0]?.message).toMatch(/Aliases limit of 30/);
      const schemas = await gql(
        app.baseUrl,
        key,
        `{ ${Array.from({ length: 300 }, (_, i) => `s${i}: __schema { queryType { name } }`).join(' ')} }`,
      );
      expect(codeOf(schemas)).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(schemas).length).toBeLessThan(10_000);
    });

    it('refuses too many directives, tokens and fields (breadth) with VALIDATION_FAILED', async () => {
      const directives = await gql(app.baseUrl, key, `{ me { id ${'@include(if: true) '.repeat(51)} } }`);
      expect(directives.errors?.[0]).toMatchObject({
        message: expect.stringMatching(/Directives limit/),
        extensions: { code: 'VALIDATION_FAILED' },
      });
      const tokens = await gql(app.baseUrl, key, `{ me { ${'id '.repeat(10_001)} } }`);
      expect(tokens.errors?.[0]).toMatchObject({
        message: expect.stringMatching(/Token limit of 10000/),
        extensions: { code: 'VALIDATION_FAILED' },
      });
      const wide = await gql(
        app.baseUrl,
        key,
        `{ ${Array.from({ length: 26 }, (_, i) => `f${i}: sessions { edges { node { ${'id sessionName status '.repeat(7)} } } }`).join(' ')} }`,
      );
      expect(wide.errors?.[0]).toMatchObject({
        message: 'Breadth limit of 500 exceeded, found 624.',
        extensions: { code: 'VALIDATION_FAILED' },
      });
    });

    it('counts a page size passed in a variable, or left to the default page, as one written in: each is refused alike', async () => {
      const ask = (query: string, variables?: Record<string, unknown>) =>
        http(app.baseUrl, 'POST', '/graphql', { key, body: { query, variables } });
      const refused = (found: number) => {
        const message = `Query Cost limit of 20000 exceeded, found ${found}.`;
        return { errors: [{ message, extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'query', message }] } }] };
      };
      const pages = (first: string) => `sessions${first} { edges { node { id sessionName status } } }`;
      const written = await ask(`{ ${pages('(first: 10000)')} }`);
      expect(written.body).toEqual(refused(196_250));
      const passed = await ask(`query($n: Int) { ${pages('(first: $n)')} }`, { n: 10_000 });
      expect({ status: passed.status, body: passed.body }).toEqual({ status: written.status, body: written.body });
      const defaulted = await ask(`query($n: Int = 10000) { ${pages('(first: $n)')} }`);
      expect({ status: defaulted.status, body: defaulted.body }).toEqual({ status: written.status, body: written.body });

      // Nested connections with no page size: each counts as its default page of 50.
      const nested = (first: string) =>
        `sessions${first} { edges { node { id messages${first} { edges { node { id content status } } } } } }`;
      const fifties = await ask(`{ ${nested('(first: 50)')} }`);
      expect(fifties.body).toEqual(refused(166_229.6875));
      const unsaid = await ask(`{ ${nested('')} }`);
      expect({ status: unsaid.status, body: unsaid.body }).toEqual({ status: fifties.status, body: fifties.body });

      const small = await ask(`query($n: Int) { ${nested('(first: $n)')} }`, { n: 5 });
      expect(small).toMatchObject({ status: 200, body: { data: { sessions: { edges: [] } } } });
    });

    it('refuses an operation over a limit before it runs: no aliased mutation creates anything', async () => {
      const creates = Array.from({ length: 31 }, (_, i) => `c${i}: createSession(name: "alias ${i}") { id }`).join(' ');
      const res = await gql(app.baseUrl, key, `mutation { ${creates} }`);
      expect(codeOf(res)).toBe('VALIDATION_FAILED');
      expect(await app.db.session.count({ where: { sessionName: { startsWith: 'alias ' } } })).toBe(0);
    });

    it('lets the standard introspection query (GraphiQL, code generators) through with the default limits', async () => {
      const res = await gql(app.baseUrl, key, getIntrospectionQuery());
      expect(res.errors).toBeUndefined();
      expect(res.data).toMatchObject({ __schema: { queryType: { name: 'Query' } } });
    });

    it('answers yoga-level refusals in the API error codes: a mutation over GET, an unknown operation name', async () => {
      const viaGet = await http(
        app.baseUrl,
        'GET',
        `/graphql?query=${encodeURIComponent('mutation { createSession(name: "x") { id } }')}`,
        {
          key,
          headers: { accept: 'application/json' },
        },
      );
      expect(viaGet.status).toBe(400);
      expect(viaGet.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
      const unknownName = await http(app.baseUrl, 'POST', '/graphql', {
        key,
        body: { query: 'query A { me { id } }', operationName: 'B' },
      });
      expect(unknownName.status).toBe(400);
      expect(unknownName.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    });
  });

  describe('subscriptions and connections', () => {
    it('serves subscriptions over graphql-ws only, where they are capped: over HTTP they are refused', async () => {
      const query = 'subscription { campaignProgress(campaignId: "00000000-0000-4000-8000-0000000000cc") { sent } }';
      for (const accept of ['application/json', 'text/event-stream']) {
        const res = await fetch(`${app.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json', accept },
          body: JSON.stringify({ query }),
          signal: AbortSignal.timeout(5_000),
        });
        const text = await res.text();
        expect(text, accept).toContain('VALIDATION_FAILED');
        expect(text, accept).toContain('Subscriptions are served over graphql-ws');
      }
    });

    it('caps subscriptions per socket and per account with RATE_LIMITED, and connections per key with close code 4429', async () => {
      const first = openSocket(app, key);
      await first.connected;
      const query = 'subscription($c: ID!) { campaignProgress(campaignId: $c) { sent } }';
      const subs = [0, 1, 2, 3].map((i) => follow(first, query, { c: `00000000-0000-4000-8000-00000000000${i}` }));
      await waitUntil(
        async () => subs[3].errors(),
        (e) => e !== undefined,
        5_000,
      );
      expect(subs[3].errors()?.[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
      expect(subs.slice(0, 3).map((s) => s.errors())).toEqual([undefined, undefined, undefined]);

      const second = openSocket(app, key);
      await second.connected;
      const more = [4, 5, 6].map((i) => follow(second, query, { c: `00000000-0000-4000-8000-00000000000${i}` }));
      await waitUntil(
        async () => more[2].errors(),
        (e) => e !== undefined,
        5_000,
      );
      // 3 on the first socket + 2 here = the account's 5; the third here is one too many.
      expect(more[2].errors()?.[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
      expect(more.slice(0, 2).map((s) => s.errors())).toEqual([undefined, undefined]);

      const third = openSocket(app, key);
      await third.connected;
      expect(third.closed()).toBeNull();
      const fourth = openSocket(app, key);
      await fourth.connected;
      expect(fourth.closed()).toBe(4429);
      // Another key is not affected.
      const elsewhere = openSocket(app, other);
      await elsewhere.connected;
      expect(elsewhere.closed()).toBeNull();
      for (const socket of [first, second, third, fourth, elsewhere]) await socket.client.dispose();
    });

    it('closes the sockets of a rotated key with code 4403 within the key cache window', async () => {
      const account = await app.newAccount();
      const socket = openSocket(app, account.apiKey);
      await socket.connected;
      const sub = follow(socket, 'subscription($c: ID!) { campaignProgress(campaignId: $c) { sent } }', {
        c: '00000000-0000-4000-8000-0000000000aa',
      });
      await new Promise((r) => setTimeout(r, 100));
      await rotateApiKey(app.deps, { email: account.email });
      await waitUntil(
        async () => socket.closed(),
        (code) => code !== null,
        5_000,
      );
      expect(socket.closed()).toBe(4403);
      // Nothing published after the rotation reaches the closed socket.
      app.deps.events.publish('campaign', campaignTopic(account.id, '00000000-0000-4000-8000-0000000000aa'), {
        campaignId: '00000000-0000-4000-8000-0000000000aa',
        total: 1,
        sent: 1,
        failed: 0,
        remaining: 0,
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(sub.frames).toEqual([]);
      await socket.client.dispose();
    });

    it('keeps campaign progress inside the account: a progress id of one account is not seen, nor fed, by another', async () => {
      const a = await app.newAccount();
      const b = await app.newAccount();
      const id = '00000000-0000-4000-8000-0000000000bb';
      const [sa, sb] = [openSocket(app, a.apiKey), openSocket(app, b.apiKey)];
      await Promise.all([sa.connected, sb.connected]);
      const query = 'subscription($c: ID!) { campaignProgress(campaignId: $c) { campaignId sent } }';
      const [fa, fb] = [follow(sa, query, { c: id }), follow(sb, query, { c: id })];
      await new Promise((r) => setTimeout(r, 200));
      // What account A's bulk send publishes, then what account B's would.
      app.deps.events.publish('campaign', campaignTopic(a.id, id), { campaignId: id, total: 2, sent: 1, failed: 0, remaining: 1 });
      app.deps.events.publish('campaign', campaignTopic(b.id, id), { campaignId: id, total: 9, sent: 9, failed: 0, remaining: 0 });
      await waitUntil(
        async () => fa.frames.length + fb.frames.length,
        (n) => n >= 2,
        5_000,
      );
      expect(fa.frames).toEqual([{ data: { campaignProgress: { campaignId: id, sent: 1 } } }]);
      expect(fb.frames).toEqual([{ data: { campaignProgress: { campaignId: id, sent: 9 } } }]);
      await sa.client.dispose();
      await sb.client.dispose();
    });
  });

  describe('per-account caps', () => {
    it('refuses a session past MAX_SESSIONS_PER_ACCOUNT with 409 CONFLICT, for that account only', async () => {
      const owner = await app.newAccount();
      for (const name of ['one', 'two'])
        expect((await http(app.baseUrl, 'POST', '/v1/sessions', { key: owner.apiKey, body: { name } })).status).toBe(201);
      const third = await http(app.baseUrl, 'POST', '/v1/sessions', { key: owner.apiKey, body: { name: 'three' } });
      expect(third.status).toBe(409);
      expect(third.body).toEqual({ ok: false, error: { code: 'CONFLICT', message: expect.stringMatching(/most sessions allowed \(2\)/) } });
      const viaGraphql = await gql(app.baseUrl, owner.apiKey, 'mutation { createSession(name: "four") { id } }');
      expect(codeOf(viaGraphql)).toBe('CONFLICT');
      expect(await app.db.session.count({ where: { accountId: owner.id } })).toBe(2);
      expect((await http(app.baseUrl, 'POST', '/v1/sessions', { key: other, body: { name: 'elsewhere' } })).status).toBe(201);
    });
  });

  describe('inputs that used to answer 500', () => {
    it('refuses a deeply nested body with 400, Idempotency-Key or not', async () => {
      const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      const variants: Array<Record<string, string>> = [
        { 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
        { 'content-type': 'application/json' },
      ];
      for (const headers of variants) {
        const res = await http(app.baseUrl, 'POST', '/v1/sessions/00000000-0000-4000-8000-000000000000/send', {
          key,
          rawBody: deep,
          headers,
        });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          ok: false,
          error: {
            code: 'VALIDATION_FAILED',
            message: expect.any(String),
            details: [{ path: '(body)', message: 'must not be nested deeper than 32 levels' }],
          },
        });
      }
    });

    it('refuses a page past 10,000,000 with 400 and serves an empty page below it', async () => {
      const huge = await http(app.baseUrl, 'GET', '/v1/contacts?page=99999999999999999999999', { key });
      expect(huge.status).toBe(400);
      expect(huge.body.error.details).toEqual([{ path: 'page', message: 'must be at most 10000000' }]);
      const last = await http(app.baseUrl, 'GET', '/v1/contacts?page=10000000&limit=200', { key });
      expect(last.status).toBe(200);
      expect(last.body.contacts ?? last.body.items).toEqual([]);
    });
  });
});

describe('per-key rate limit', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp('sqlite', { RATE_LIMIT_REQUESTS: 5, RATE_LIMIT_WINDOW_S: 60 });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 429 RATE_LIMITED with Retry-After right after the key, before validation, on REST, GraphQL and WebSocket', async () => {
    const { apiKey } = await app.newAccount();
    for (let i = 0; i < 5; i++) expect((await http(app.baseUrl, 'GET', '/v1/accounts/me', { key: apiKey })).status).toBe(200);
    // An invalid body would be a 400; the limit comes first.
    const rest = await http(app.baseUrl, 'POST', '/v1/sessions', { key: apiKey, body: { name: 42 } });
    expect(rest.status).toBe(429);
    expect(rest.body).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // An unknown key is still 401: the key comes first.
    expect((await http(app.baseUrl, 'GET', '/v1/accounts/me', { key: 'wak_unknown' })).status).toBe(401);

    const graphql = await http(app.baseUrl, 'POST', '/graphql', { key: apiKey, body: { query: '{ me { ' } });
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(graphql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const socket = openSocket(app, apiKey);
    await socket.connected;
    expect(socket.closed()).toBe(4429);
    await socket.client.dispose();

    // Another key has its own budget.
    const fresh = await app.newAccount();
    expect((await http(app.baseUrl, 'GET', '/v1/accounts/me', { key: fresh.apiKey })).status).toBe(200);
  });
});
