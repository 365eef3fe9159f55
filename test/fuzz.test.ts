import { readFileSync } from 'node:fs';
import { Router } from 'express';
import fc from 'fast-check';
import { buildSchema, getNamedType, isEnumType, isInputObjectType, isLeafType, isListType, isNonNullType, isObjectType } from 'graphql';
import type { GraphQLField, GraphQLInputType, GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/resolvers/errors.ts';
import { restRouter } from '../src/rest/router.ts';
import { ERROR_CODES } from '../src/resolvers/errors.ts';
import { startSandbox, sandboxAddress } from '../src/runtime/sandbox/sandbox.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, graphqlWs, http, startTestApp } from './helpers/app.ts';
import type { Json, TestApp } from './helpers/app.ts';

/**
 * Generated requests against every REST route and every GraphQL root field: whatever they carry, the
 * answer is never a 5xx and every error has the API's error shape and one of its codes (docs/errors.md). Seeded, so a
 * failure replays (FUZZ_SEED=<seed> to try another sequence).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const REST_RUNS = 1000;
const GRAPHQL_RUNS = 500;
const SUBSCRIPTION_RUNS = 40;

interface Route {
  method: string;
  path: string;
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** The route table as Express holds it, so a route added later is fuzzed without touching this file. */
const routesOf = (stack: Layer[], out: Route[] = []): Route[] => {
  for (const layer of stack) {
    if (layer.route)
      for (const method of Object.keys(layer.route.methods)) out.push({ method: method.toUpperCase(), path: layer.route.path });
    else if (layer.handle?.stack) routesOf(layer.handle.stack, out);
  }
  return out;
};

const FIELDS = [
  'to',
  'message',
  'name',
  'phone',
  'jid',
  'jids',
  'url',
  'caption',
  'mimetype',
  'fileName',
  'ptt',
  'buttons',
  'sections',
  'header',
  'footer',
  'title',
  'text',
  'type',
  'contacts',
  'template',
  'delayMs',
  'everyMs',
  'sendAt',
  'status',
  'payload',
  'statusJidList',
  'audience',
  'participants',
  'action',
  'subject',
  'description',
  'desc',
  'tags',
  'variables',
  'email',
  'isBlocked',
  'isGroup',
  'latitude',
  'longitude',
  'contactName',
  'contactPhone',
  'documentUrl',
  'variations',
  'progressId',
  'phoneNumber',
  'sessionName',
  'emoji',
  'messageId',
  'newText',
  'adminOnly',
  'inviteCode',
  'groupId',
  'id',
  'copyCode',
];

// Never a public address: nothing generated may make the service fetch from outside this machine.
const URLS = [
  'http://files.invalid/a.jpg',
  'https://127.0.0.1/x',
  'http://[::1]/',
  'ftp://files.invalid/a',
  'http://files.invalid/%ZZ.png',
  'http://10.0.0.1/a',
];

/** Path values sent unencoded: malformed escapes (a lone %, a bad hex digit, a UTF-16 surrogate) and NUL. */
const RAW_ESCAPES = new Set(['%ZZ', '%00', '%', '%ED%A0%80']);

const weird = fc.constantFrom(
  '',
  ' ',
  '%ZZ',
  '%00',
  '%',
  '%ED%A0%80',
  '\u0000',
  '..',
  '../..',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  '9'.repeat(40),
  '-1',
  '0',
  '1.5',
  '1e400',
  'NaN',
  '😀'.repeat(50),
  'a'.repeat(5000),
  '<script>',
  "' OR 1=1 --",
  '{}',
  '[]',
  '15550001111',
  '15550001111@s.whatsapp.net',
  '123@g.us',
  ...URLS,
);

const scalar = fc.oneof(
  weird,
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e300, -1e300, 2 ** 31, 2 ** 63, 0.5, -0),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
);

const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), scalar, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.dictionary(fc.constantFrom(...FIELDS), scalar, { maxKeys: 4 }), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; contentType: string };

const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
  { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 8 }).map((v): Body => ({ kind: 'json', value: v })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v): Body => ({ kind: 'json', value: v })) },
  {
    weight: 1,
    arbitrary: fc
      .record({
        text: fc.oneof(fc.string({ maxLength: 50 }), fc.constantFrom('{', '{"a":', '[1,', `${'['.repeat(60)}${']'.repeat(60)}`, '\u0000')),
        contentType: fc.constantFrom(
          'application/json',
          'text/plain',
          'application/json; charset=latin1',
          'application/x-www-form-urlencoded',
        ),
      })
      .map((r): Body => ({ kind: 'raw', ...r })),
  },
);

/** REST error bodies: {ok: false, error: {code, message, details?}}, the status the code stands for. */
const expectRestShape = (status: number, payload: Json, what: string) => {
  expect(status, what).toBeLessThan(500);
  if (status < 400) return;
  expect(payload, what).toEqual({ ok: false, error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
  const { code, details } = payload.error;
  expect(ERROR_CODES.has(code), `${what}: ${code}`).toBe(true);
  expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS], what).toBe(status);
  expect(
    Object.keys(payload.error).every((k) => ['code', 'message', 'details'].includes(k)),
    what,
  ).toBe(true);
  if (code === 'VALIDATION_FAILED') {
    expect(details, what).toEqual(expect.arrayContaining([{ path: expect.any(String), message: expect.any(String) }]));
    expect(details.length, what).toBeGreaterThan(0);
  }
};

/** GraphQL answers: never a 5xx, and every error carries one of the API's codes other than INTERNAL. */
const expectGraphQLShape = (status: number, payload: Json, what: string) => {
  expect(status, what).toBeLessThan(500);
  expect(typeof payload, what).toBe('object');
  for (const error of payload?.errors ?? []) {
    expect(typeof error.message, what).toBe('string');
    const code = error.extensions?.code;
    expect(ERROR_CODES.has(code), `${what}: ${code} ${error.message}`).toBe(true);
    expect(code, `${what}: ${error.message}`).not.toBe('INTERNAL');
  }
};

const schema = buildSchema(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'));

/** A value of the argument's type, or (one time in four at each level) anything at all. */
const inputOf = (type: GraphQLInputType, name: string, depth = 0): fc.Arbitrary<unknown> => {
  // A long-poll would hold the run for its whole wait.
  if (name === 'waitMs') return fc.constantFrom(0, 1, -1, null, 'x');
  const typed = (): fc.Arbitrary<unknown> => {
    if (isNonNullType(type)) return inputOf(type.ofType, name, depth);
    if (isListType(type)) return fc.array(inputOf(type.ofType, name, depth + 1), { maxLength: 3 });
    if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
    if (isInputObjectType(type)) {
      if (depth > 3) return fc.constant({});
      const fields = Object.values(type.getFields());
      return fc.record(Object.fromEntries(fields.map((f) => [f.name, inputOf(f.type, f.name, depth + 1)])), { requiredKeys: [] });
    }
    switch (getNamedType(type).name) {
      case 'Int':
        return fc.oneof(fc.integer({ min: -5, max: 500 }), fc.constantFrom(2 ** 31 - 1, -(2 ** 31)));
      case 'Boolean':
        return fc.boolean();
      case 'ID':
        return fc.oneof(fc.uuid(), weird);
      case 'JSONObject':
        return fc.dictionary(fc.string({ maxLength: 10 }), scalar, { maxKeys: 4 });
      default:
        return fc.oneof(fc.string({ maxLength: 30 }), weird);
    }
  };
  return fc.oneof({ weight: 3, arbitrary: typed() }, { weight: 1, arbitrary: value });
};

/** Every leaf field of the returned type, one level down for lists of objects (enough to run each resolver). */
const selectionOf = (type: GraphQLObjectType, depth = 0): string =>
  Object.values(type.getFields())
    .filter((f) => f.args.every((a) => !isNonNullType(a.type)))
    .map((f) => {
      const named = getNamedType(f.type);
      if (isLeafType(named)) return f.name;
      if (depth < 1 && isObjectType(named)) return `${f.name} { ${selectionOf(named, depth + 1)} }`;
      return '';
    })
    .filter(Boolean)
    .join(' ') || '__typename';

const operationFor = (kind: 'query' | 'mutation' | 'subscription', field: GraphQLField<unknown, unknown>) => {
  const vars = field.args.map((a, i) => `$a${i}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a, i) => `${a.name}: $a${i}`).join(', ');
  const named = getNamedType(field.type);
  const selection = isObjectType(named) ? ` { ${selectionOf(named)} }` : '';
  const query = `${kind}${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
  const variables = fc.record(Object.fromEntries(field.args.map((a, i) => [`a${i}`, inputOf(a.type, a.name)])), { requiredKeys: [] });
  return variables.map((v) => ({ query, variables: v }));
};

const rootFields = (kind: 'query' | 'mutation' | 'subscription') => {
  const root = kind === 'query' ? schema.getQueryType() : kind === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  return Object.values(root?.getFields() ?? {});
};

describe.each(dbKinds)('fuzz: no input gets a 5xx or an error outside the API error codes (%s)', (kind) => {
  let app: TestApp;
  let sandbox: Sandbox;
  let key: string;
  let sessionId: string;
  let groupId: string;
  let routes: Route[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox();
    app = await startTestApp(
      kind,
      { MAX_SESSIONS_PER_ACCOUNT: 5, NETWORK_MODE: 'inline' },
      {
        // Links go to the loopback sandbox; every host name resolves to a loopback address, which the media guard refuses.
        target: { sandbox: sandboxAddress(sandbox) },
        resolveHost: async () => ['127.0.0.1'],
      },
      // On PostgreSQL the several-nodes layer is on, as `npm start` runs there: it reads session ids first.
      { clustered: true },
    );
    routes = routesOf((Router().use(restRouter(app.deps)) as unknown as { stack: Layer[] }).stack);
    key = (await app.newAccount()).apiKey;
    sessionId = (await http(app.baseUrl, 'POST', '/v1/sessions', { key, body: { name: 'fuzzed' } })).body.id;
    await http(app.baseUrl, 'POST', '/v1/contacts', { key, body: { phone: '15550001111', name: 'Known' } });
    groupId = (await http(app.baseUrl, 'POST', '/v1/contacts/groups', { key, body: { name: 'known group' } })).body.id;
  });
  afterAll(async () => {
    await app?.close();
    await sandbox?.close();
  });

  it('covers the whole route table', () => {
    expect(routes.length).toBeGreaterThan(50);
    expect(routes).toContainEqual({ method: 'GET', path: '/contacts' });
  });

  it(`answers ${REST_RUNS} generated REST requests over every route without a 5xx, in the API's error shape`, async () => {
    const param = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom('SESSION', 'GROUP', '15550001111@s.whatsapp.net', '15550001111') },
      { weight: 2, arbitrary: fc.uuid() },
      { weight: 3, arbitrary: weird },
      { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
    );
    const queryValue = fc.oneof(
      { weight: 3, arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String) },
      { weight: 2, arbitrary: fc.integer({ min: -5, max: 300 }).map(String) },
      { weight: 2, arbitrary: weird },
      { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
    );
    const QUERY_KEYS = ['page', 'limit', 'search', 'tag', 'status', 'consume', 'waitMs', 'type', 'x'];
    // Each key on its own: a route's own parameters turn up in about half of its requests.
    const query = fc.record(Object.fromEntries(QUERY_KEYS.map((k) => [k, queryValue])), { requiredKeys: [] });
    const request = fc.record({
      route: fc.constantFrom(...routes),
      params: fc.array(param, { minLength: 4, maxLength: 4 }),
      query,
      body,
      idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 10 }), fc.constant('k'.repeat(300))), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ route, params, query: q, body: b, idempotencyKey }) => {
        let i = 0;
        const path = route.path.replace(/:(\w+)/g, () => {
          const raw = params[i++ % params.length] ?? '';
          const v = raw === 'SESSION' ? sessionId : raw === 'GROUP' ? groupId : raw;
          // Raw escapes go as written, to reach the path decoding; everything else is encoded.
          return RAW_ESCAPES.has(v) ? v : encodeURIComponent(v) || 'x';
        });
        const search = new URLSearchParams(
          Object.entries(q).map(([k, v]) => [k, k === 'waitMs' && /^\d+$/.test(String(v)) ? '0' : String(v)]),
        );
        const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
        const options =
          route.method === 'GET' || route.method === 'HEAD'
            ? { key, headers }
            : b.kind === 'json'
              ? { key, body: b.value, headers }
              : b.kind === 'raw'
                ? { key, rawBody: b.text, headers: { ...headers, 'content-type': b.contentType } }
                : { key, headers };
        const url = `/v1${path}${search.size > 0 ? `?${search}` : ''}`;
        const res = await http(app.baseUrl, route.method, url, options);
        expectRestShape(res.status, res.body, `${route.method} ${url} ${JSON.stringify(b).slice(0, 300)}`);
      }),
      { seed: SEED, numRuns: REST_RUNS, endOnFailure: true },
    );
  }, 180_000);

  it(`answers ${GRAPHQL_RUNS} generated operations over every query and mutation field without a 5xx or a code outside the API's`, async () => {
    const fields = [
      ...rootFields('query').map((f) => ['query', f] as const),
      ...rootFields('mutation').map((f) => ['mutation', f] as const),
    ];
    expect(fields.length).toBeGreaterThan(40);
    const operation = fc.oneof(...fields.map(([k, f]) => operationFor(k, f)));
    // Half the time the session and group that exist, so resolvers get past their 404s.
    const withKnownIds = (variables: Record<string, unknown>, flip: boolean) =>
      flip
        ? Object.fromEntries(
            Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' && /^[0-9a-f-]{36}$/.test(v) ? sessionId : v]),
          )
        : variables;
    await fc.assert(
      fc.asyncProperty(operation, fc.boolean(), async ({ query, variables }, flip) => {
        const res = await http(app.baseUrl, 'POST', '/graphql', { key, body: { query, variables: withKnownIds(variables, flip) } });
        expectGraphQLShape(res.status, res.body, `${query} ${JSON.stringify(variables).slice(0, 300)}`);
      }),
      { seed: SEED, numRuns: GRAPHQL_RUNS, endOnFailure: true },
    );
  }, 180_000);

  it(`answers ${SUBSCRIPTION_RUNS} generated subscriptions over graphql-ws with errors in the API's codes`, async () => {
    const fields = rootFields('subscription');
    expect(fields.length).toBeGreaterThanOrEqual(3);
    const client = graphqlWs(app.baseUrl, key);
    try {
      await fc.assert(
        fc.asyncProperty(fc.oneof(...fields.map((f) => operationFor('subscription', f))), async ({ query, variables }) => {
          const errors: Json[] = [];
          await new Promise<void>((resolve) => {
            const stop = client.subscribe(
              { query, variables },
              {
                next: (frame) => errors.push(...((frame as Json).errors ?? [])),
                error: (err) => {
                  errors.push(...(Array.isArray(err) ? err : [{ message: String(err), extensions: { code: 'CLOSED' } }]));
                  resolve();
                },
                complete: () => resolve(),
              },
            );
            // A valid subscription stays open; a refused one answers at once.
            setTimeout(() => {
              stop();
              resolve();
            }, 50);
          });
          expectGraphQLShape(200, { errors }, `${query} ${JSON.stringify(variables).slice(0, 300)}`);
        }),
        { seed: SEED, numRuns: SUBSCRIPTION_RUNS, endOnFailure: true },
      );
    } finally {
      await client.dispose();
    }
  }, 60_000);
});
