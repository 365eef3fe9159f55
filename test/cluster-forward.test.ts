import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostgresOwnership } from '../src/runtime/cluster/ownership.ts';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createLogger } from '../src/runtime/logger.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, http, startTestApp } from './helpers/app.ts';
import { waitUntil } from './helpers/sandbox.ts';

const SECRET = `cluster-${randomUUID()}`;
const postgres = dbKinds.includes('postgres');

/**
 * Issue 46 item 4: a node that stops answering (dead, its registration not yet lapsed) costs the nodes
 * that forward to it one warning, not one per request, and its sessions come to a live node once its
 * registration lapses. The silent node is a second owner in this process whose address nothing listens on.
 */
describe.skipIf(!postgres)('forwarding to a node that does not answer (skipped when TEST_DATABASES excludes postgres)', () => {
  let app: TestApp;
  let other: Db;
  let silent: PostgresOwnership | undefined;
  let key = '';

  beforeAll(async () => {
    app = await startTestApp('postgres', { CLUSTER_SECRET: SECRET }, {}, { clustered: true });
    key = (await app.newAccount()).apiKey;
    other = createPrisma(app.deps.settings.DATABASE_URL);
  }, 60_000);

  afterAll(async () => {
    vi.restoreAllMocks();
    await silent?.stop();
    await other?.$disconnect();
    await app?.close();
  });

  it('warns once for a silent owner, answers its requests 409 with Retry-After, and serves the session once the owner is gone', {
    timeout: 60_000,
  }, async () => {
    const created = await http(app.baseUrl, 'POST', '/v1/sessions', { key, body: { name: 'elsewhere' } });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    await waitUntil(
      () => other.sessionLease.findUnique({ where: { sessionId: id } }),
      (lease) => lease !== null,
      20_000,
    );
    // An address nothing listens on: the node died, its row and advisory lock not yet gone.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
    silent = new PostgresOwnership({ db: other, databaseUrl: app.deps.settings.DATABASE_URL, logger, ttlMs: 60_000 });
    await silent.start({ gained: () => undefined, lost: () => undefined });
    await silent.setAddress(`http://127.0.0.1:${port}`);
    await other.$executeRawUnsafe(
      `UPDATE "SessionLease" SET "nodeId" = $2, epoch = epoch + 1, "expiresAt" = (now() AT TIME ZONE 'UTC') + interval '1 minute' WHERE "sessionId" = $1`,
      id,
      silent.nodeId,
    );
    // This node sees the move at its next renewal.
    await waitUntil(
      async () => app.deps.ownership.owns(id),
      (owns) => !owns,
      20_000,
    );
    const warn = vi.spyOn(app.deps.logger, 'warn');
    for (let i = 0; i < 12; i++) {
      const res = await http(app.baseUrl, 'GET', `/v1/sessions/${id}/status`, { key });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.body).toMatchObject({ ok: false, error: { code: 'SESSION_NOT_CONNECTED' } });
    }
    const aboutForwarding = () => warn.mock.calls.filter((call) => call.some((arg) => typeof arg === 'string' && /forward/.test(arg)));
    expect(aboutForwarding()).toHaveLength(1);
    // Its registration ends (it lapses, or here: the node's row goes): this node takes the session and answers.
    await silent.stop();
    silent = undefined;
    const served = await waitUntil(
      () => http(app.baseUrl, 'GET', `/v1/sessions/${id}/status`, { key }),
      (res) => res.status === 200,
      20_000,
    );
    expect(served.body).toMatchObject({ id, status: 'DISCONNECTED' });
    expect(aboutForwarding()).toHaveLength(1);
  });
});
