import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createAccount } from '../../src/resolvers/accounts.ts';
import type { Deps } from '../../src/resolvers/context.ts';
import { buildApp } from '../../src/runtime/root/app.ts';
import { createDeps } from '../../src/runtime/root/deps.ts';
import type { DepsOptions } from '../../src/runtime/root/deps.ts';
import { PostgresOwnership } from '../../src/runtime/cluster/ownership.ts';
import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { createLogger } from '../../src/runtime/logger.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { defaultSettings } from '../../src/runtime/settings.ts';
import type { Settings } from '../../src/runtime/settings.ts';

export type DbKind = 'sqlite' | 'postgres';

/** Every database-touching suite runs on both; TEST_DATABASES=sqlite narrows it on a machine without PostgreSQL. */
export const dbKinds: DbKind[] = (process.env.TEST_DATABASES ?? 'sqlite,postgres')
  .split(',')
  .map((s) => s.trim())
  .filter((s): s is DbKind => s === 'sqlite' || s === 'postgres');

export interface TestApp {
  baseUrl: string;
  db: Db;
  deps: Deps;
  newAccount: (email?: string) => Promise<{ id: string; apiKey: string; email: string }>;
  close: () => Promise<void>;
}

let accounts = 0;

export const startTestApp = async (
  kind: DbKind,
  overrides: Partial<Settings> = {},
  options: Partial<Omit<DepsOptions, 'db' | 'logger' | 'settings'>> = {},
  extra: {
    /** a database of the caller's, kept on close (a restart of the service on the same data); a fresh one otherwise */
    existing?: TestDatabase;
    /** the Prisma client over the database (a test can wrap it, to count statements) */
    makeDb?: (url: string) => Db;
    /** on PostgreSQL, the several-nodes layer as `npm start` runs it there (leases, the forwarder), with this node alone */
    clustered?: boolean;
  } = {},
): Promise<TestApp> => {
  const database = extra.existing ?? (await createTestDatabase(kind));
  const db = (extra.makeDb ?? createPrisma)(database.url);
  // The suite and the benchmarks send far more than a client would; the rate limit and the send pacer have tests of their own.
  const settings = defaultSettings({ DATABASE_URL: database.url, RATE_LIMIT_REQUESTS: 0, SEND_PACING: 'off', ...overrides });
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const cluster =
    extra.clustered && kind === 'postgres'
      ? new PostgresOwnership({ db, databaseUrl: database.url, logger, ttlMs: settings.CLUSTER_LEASE_TTL_MS })
      : undefined;
  const deps = createDeps({ db, logger, settings, ...(cluster ? { ownership: cluster } : {}), ...options });
  const app = buildApp(deps);
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  const { port } = app.server.address() as AddressInfo;
  if (cluster) {
    await cluster.start({
      gained: (claims) => void deps.sessions.adopt(claims.map((c) => c.sessionId)),
      lost: (ids) => deps.sessions.release(ids),
    });
    await cluster.setAddress(`http://127.0.0.1:${port}`);
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    db,
    deps,
    newAccount: async (email = `user${++accounts}-${Date.now()}@example.com`) => createAccount(deps, { email }),
    close: async () => {
      await cluster?.stop();
      await app.close();
      await deps.jobs.stop();
      await deps.webhookDelivery.stop();
      await deps.sinks.stop();
      deps.incomingMedia.stop();
      deps.messageRetention.stop();
      await deps.sessions.closeAll();
      await deps.outgoing.settled();
      await db.$disconnect();
      if (!extra.existing) await database.drop();
    },
  };
};

export interface HttpResult<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** Response bodies are what the assertions check, so tests read them untyped. */
// biome-ignore lint/suspicious/noExplicitAny: JSON under test; the expect() calls are its type check
export type Json = any;

export const http = async <T = Json>(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> => {
  const headers: Record<string, string> = { ...(options.key ? { 'x-api-key': options.key } : {}), ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // left as text so a test can assert that no HTML came back
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
};

export const gql = async <T = Json>(
  baseUrl: string,
  key: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; data?: T; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }> => {
  const res = await http<{ data?: T; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }>(
    baseUrl,
    'POST',
    '/graphql',
    { key, body: { query, variables } },
  );
  return { status: res.status, ...res.body };
};

/** A graphql-ws client of the service at `baseUrl` with an API key, which does not reconnect (a test sees a dropped socket). */
export const graphqlWs = (baseUrl: string, key: string): Client =>
  createClient({
    url: `${baseUrl.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { 'x-api-key': key },
  });
