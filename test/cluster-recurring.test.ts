import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/resolvers/accounts.ts';
import { occurrenceRecordId } from '../src/resolvers/recurring.ts';
import type { Db } from '../src/runtime/db/client.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { callAsClient, clusterEnv, ownerOf as clusterOwnerOf, startClusterGround, stopCluster } from './helpers/cluster.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const SECRET = `cluster-${randomUUID()}`;
const ME = '15558870001';
const TO = '15558870091';
const EVERY_MS = 1000;
/** requests per key in the window (RATE_LIMIT_REQUESTS), shared by the nodes through Redis */
const BUDGET = 400;

// Several nodes share one PostgreSQL database; SQLite is a single node by design.
const postgres = dbKinds.includes('postgres');

describe.skipIf(!postgres)(
  'a recurring message across a SIGKILLed owner, and one request budget on two nodes (skipped when TEST_DATABASES excludes postgres)',
  () => {
    let sandbox: Sandbox;
    let database: TestDatabase;
    let db: Db;
    const nodes: ServiceProcess[] = [];

    const env = () => ({
      ...clusterEnv({ databaseUrl: database.url, sandboxUrl: sandbox.controlUrl, key: KEY, secret: SECRET }),
      DAILY_QUOTA: '0',
      RATE_LIMIT_REQUESTS: String(BUDGET),
      RATE_LIMIT_WINDOW_S: '600',
      RECURRING_MIN_MS: '500',
    });
    /** As a client: a 409 with Retry-After (the session is moving between nodes) is tried again. */
    const call = (node: ServiceProcess, method: string, path: string, body?: unknown) =>
      callAsClient(node.baseUrl, KEY, method, path, body);
    const ownerOf = (sessionId: string) => clusterOwnerOf(db, nodes, sessionId);
    const ticks = () => sandbox.control.inbox(TO).filter((e) => e.content === 'tick');

    beforeAll(async () => {
      ({ sandbox, database, db } = await startClusterGround([ME, TO]));
      for (let i = 0; i < 2; i++) nodes.push(await spawnService(env()));
    }, 120_000);

    afterAll(async () => {
      await stopCluster({ nodes, db, sandbox, database });
    });

    it("counts a key's requests once across the nodes, a request sent on to its session's owner included", {
      timeout: 120_000,
    }, async () => {
      const account = await createAccount({ db }, { email: `budget-${randomUUID()}@example.com` });
      const [a, b] = nodes as [ServiceProcess, ServiceProcess];
      const created = await http(a.baseUrl, 'POST', '/v1/sessions', { key: account.apiKey, body: { name: 'budget' } });
      expect(created.status).toBe(201);
      // Every answer but a 429 took one unit, wherever it was served: the session's own node, or the other
      // node that sent it on (which takes the unit, so the owner does not take a second one).
      const statuses: number[] = [created.status];
      for (let i = 1; statuses.at(-1) !== 429 && i < BUDGET; i++) {
        const node = i % 2 === 0 ? a : b;
        statuses.push((await http(node.baseUrl, 'GET', `/v1/sessions/${created.body.id}`, { key: account.apiKey })).status);
      }
      expect(
        statuses.filter((s) => s === 429),
        `429 after ${statuses.length - 1}`,
      ).toEqual([]);
      expect(statuses).toHaveLength(BUDGET);
      for (const node of [a, b]) {
        const refused = await http(node.baseUrl, 'GET', `/v1/sessions/${created.body.id}`, { key: account.apiKey });
        expect(refused.status).toBe(429);
        expect(refused.body.error.code).toBe('RATE_LIMITED');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      const forwarded = new Set(statuses.slice(1));
      expect(
        [...forwarded].every((s) => s === 200),
        JSON.stringify([...forwarded]),
      ).toBe(true);
    });

    it('keeps firing on the new owner, each occurrence on the phone once, and is listed and cancelled there', {
      timeout: 240_000,
    }, async () => {
      const sessionId = await linkThroughQr(nodes[0]?.baseUrl ?? '', KEY, sandbox, ME, 'recurring', 30_000);
      const owner = await ownerOf(sessionId);
      const other = nodes.find((n) => n !== owner);
      if (!owner || !other) throw new Error('the session has no owner among the nodes');
      const base = `/v1/sessions/${sessionId}/messages/recurring`;
      // Created through the node that does not own the session: forwarded to the owner, a row either way.
      const tick = await call(other, 'POST', base, { to: TO, message: 'tick', everyMs: EVERY_MS });
      expect(tick.status, JSON.stringify(tick.body)).toBe(200);
      await waitUntil(
        async () => ticks().length,
        (n) => n >= 3,
        30_000,
      );
      await owner.stop('SIGKILL');
      const atKill = ticks().length;
      await waitUntil(
        async () => ticks().length,
        (n) => n >= atKill + 4,
        90_000,
      );
      expect((await ownerOf(sessionId)) === other).toBe(true);
      const listed = await call(other, 'GET', base);
      expect(listed.body).toEqual({
        count: 1,
        items: [
          {
            timerId: tick.body.timerId,
            sessionId,
            to: `${TO}@s.whatsapp.net`,
            message: 'tick',
            everyMs: EVERY_MS,
            createdAt: expect.any(String),
          },
        ],
      });
      expect((await call(other, 'DELETE', `${base}/${tick.body.timerId}`)).body).toEqual({ ok: true });
      const marker = await call(other, 'POST', `/v1/sessions/${sessionId}/messages/schedule`, {
        to: TO,
        message: 'marker',
        delayMs: 2 * EVERY_MS,
      });
      expect(marker.status).toBe(200);
      await waitUntil(
        async () => sandbox.control.inbox(TO).map((e) => e.content),
        (contents) => contents.includes('marker'),
        30_000,
      );
      const contents = sandbox.control.inbox(TO).map((e) => e.content);
      expect(contents.slice(contents.indexOf('marker') + 1).filter((c) => c === 'tick')).toEqual([]);

      // Which occurrence (k-th interval after the creation) each record is: none twice, none dropped on
      // either side of the failover (the ones due while no node owned the session are skipped, as documented).
      const timer = await db.recurringTimer.findUniqueOrThrow({ where: { id: tick.body.timerId } });
      const byId = new Map(
        Array.from({ length: 300 }, (_, k) => [
          occurrenceRecordId(timer.id, new Date(timer.createdAt.getTime() + (k + 1) * EVERY_MS)),
          k + 1,
        ]),
      );
      const records = await db.outgoingMessage.findMany({ where: { sessionId, content: 'tick' } });
      const ks = records.map((r) => byId.get(r.id) ?? -1).sort((a, b) => a - b);
      const context = JSON.stringify({ ks, statuses: records.map((r) => r.status), atKill });
      expect(ks.includes(-1), context).toBe(false);
      expect(
        records.every((r) => r.status === 'SENT'),
        context,
      ).toBe(true);
      const gaps = ks.slice(1).filter((k, i) => k !== (ks[i] ?? 0) + 1);
      expect(gaps.length, context).toBeLessThanOrEqual(1);
      expect(ks[0], context).toBe(1);
      expect(ticks().length, context).toBe(records.length);
      // A message the kill cut off between the phone and its SENT mark goes again with its network id: the
      // phone counts it as a duplicate of the same message, and shows it once.
      const sentIds = new Set(records.map((r) => r.waMessageId));
      expect(
        ticks().every((e) => sentIds.has(e.id) && e.duplicates <= 1),
        context,
      ).toBe(true);
      expect(new Set(ticks().map((e) => e.id)).size, context).toBe(records.length);
    });
  },
);
