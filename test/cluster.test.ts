import { randomUUID } from 'node:crypto';
import { Curve } from 'baileys';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import { runDueMessage } from '../src/resolvers/scheduling.ts';
import { PostgresOwnership } from '../src/runtime/cluster/ownership.ts';
import { createLogger } from '../src/runtime/logger.ts';
import { loadAuthState } from '../src/runtime/network/auth-store.ts';
import type { Fence } from '../src/runtime/ports/cluster.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { sandboxAddress, startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, gql, graphqlWs, http, startTestApp } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { callAsClient, clusterEnv, liveNodes, ownerOf as clusterOwnerOf, startClusterGround, stopCluster } from './helpers/cluster.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const SECRET = `cluster-${randomUUID()}`;
const METRICS = `metrics-${randomUUID()}`;
const PHONES = ['15558880001', '15558880002', '15558880003', '15558880004', '15558880005', '15558880006'];
const FRIEND = '15558880099';
/** Messaged first while the link is frozen: its devices must be looked up, which the silent link never answers. */
const NEWCOMER = '15558880098';
// Shorter leases keep the SIGSTOP case quick (the default is 10 s); long enough that a node starved of
// CPU on a busy 2-core machine does not fence itself in the middle of a QR link.
const TTL_MS = 6_000;

// Several nodes share one PostgreSQL database; SQLite is a single node by design (test/single-node.test.ts).
const postgres = dbKinds.includes('postgres');

describe.skipIf(!postgres)('three nodes on one PostgreSQL database and Redis (skipped when TEST_DATABASES excludes postgres)', () => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let db: Db;
  const nodes: ServiceProcess[] = [];
  const sessions: string[] = [];
  const stopped = new Set<ServiceProcess>();

  const env = () => ({
    ...clusterEnv({ databaseUrl: database.url, sandboxUrl: sandbox.controlUrl, key: KEY, secret: SECRET, leaseTtlMs: TTL_MS }),
    METRICS_TOKEN: METRICS,
  });
  const call = (node: ServiceProcess, method: string, path: string, body?: unknown) => http(node.baseUrl, method, path, { key: KEY, body });
  /**
   * A send as a client makes it: a 409 with Retry-After (the session is moving between nodes, nothing was
   * recorded) is tried again after the wait it asks for.
   */
  const send = (node: ServiceProcess, sessionId: string, message: string) =>
    callAsClient(node.baseUrl, KEY, 'POST', `/v1/sessions/${sessionId}/send`, { to: FRIEND, message });
  const live = () => liveNodes(nodes, stopped);
  const ownerOf = (sessionId: string) => clusterOwnerOf(db, nodes, sessionId);
  /** What the phone shows: each entry once, however often its id arrived (`duplicates` counts the repeats). */
  const shown = (number: string, text: string) => sandbox.control.inbox(number).filter((e) => e.content === text);
  const arrived = (number: string, text: string) =>
    waitUntil(
      async () => shown(number, text).length,
      (n) => n > 0,
    );
  const allConnected = (through: ServiceProcess) =>
    waitUntil(
      () => Promise.all(sessions.map(async (id) => (await call(through, 'GET', `/v1/sessions/${id}/status`)).body.status)),
      (statuses) => statuses.every((s) => s === 'CONNECTED'),
      30_000,
    );

  /** Every session held by a live node, none above its share (sessions ÷ live nodes, rounded up), all CONNECTED. */
  const balanced = async () => {
    await waitUntil(
      async () => {
        const owners = await Promise.all(sessions.map(ownerOf));
        const running = live();
        const share = Math.ceil(sessions.length / running.length);
        return owners.every((o) => o && running.includes(o)) && running.every((n) => owners.filter((o) => o === n).length <= share);
      },
      (ok) => ok,
      30_000,
    );
    await allConnected(live()[0] as ServiceProcess);
  };

  beforeAll(async () => {
    ({ sandbox, database, db } = await startClusterGround([...PHONES, FRIEND, NEWCOMER]));
    for (let i = 0; i < 3; i++) nodes.push(await spawnService(env()));
  }, 120_000);

  afterAll(async () => {
    await stopCluster({ nodes, paused: stopped, db, sandbox, database });
  });

  it('links sessions through any node, each on one owner, and a send through any node reaches the phone once', {
    timeout: 180_000,
  }, async () => {
    for (const [i, phone] of PHONES.entries()) {
      sessions.push(await linkThroughQr(nodes[i % 3]?.baseUrl ?? '', KEY, sandbox, phone, `s${i}`, 30_000));
    }
    const owners = await Promise.all(sessions.map(ownerOf));
    expect(owners.every((o) => o !== undefined)).toBe(true);
    // One link per session: the phone lists one linked device.
    for (const phone of PHONES) expect(sandbox.control.phone(phone).devices).toHaveLength(1);
    for (const [i, id] of sessions.entries()) {
      const through = nodes[(i + 1) % 3] as ServiceProcess;
      const sent = await send(through, id, `hello ${i}`);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body).toMatchObject({ ok: true });
    }
    // GraphQL too: the operation's sessionId names the owner, whichever node the client reached.
    for (const [i, id] of sessions.entries()) {
      const owner = await ownerOf(id);
      const through = nodes.find((n) => n !== owner) as ServiceProcess;
      const answer = await gql(
        through.baseUrl,
        KEY,
        `mutation($s: ID!, $m: String!) { sendText(sessionId: $s, to: "${FRIEND}", message: $m) { ok } }`,
        {
          s: id,
          m: `graphql ${i}`,
        },
      );
      expect(answer.errors).toBeUndefined();
      expect(answer.data).toEqual({ sendText: { ok: true } });
    }
    for (const i of PHONES.keys()) await arrived(FRIEND, `hello ${i}`);
    for (const i of PHONES.keys()) await arrived(FRIEND, `graphql ${i}`);
    for (const i of PHONES.keys()) expect(shown(FRIEND, `hello ${i}`)).toMatchObject([{ duplicates: 0 }]);
    for (const i of PHONES.keys()) expect(shown(FRIEND, `graphql ${i}`)).toMatchObject([{ duplicates: 0 }]);
    // Some of those requests reached a node that does not link their session, and went on to the owner.
    const forwarded = await Promise.all(
      nodes.map(async (n) => {
        const text = String((await http(n.baseUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS}` } })).body);
        return Number(/wa_cluster_forwarded_requests_total\{outcome="forwarded"\} (\d+)/.exec(text)?.[1] ?? 0);
      }),
    );
    expect(forwarded.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it('a long-poll and a subscription on one node see a message received by a session another node links', { timeout: 60_000 }, async () => {
    const id = sessions[0] as string;
    const owner = (await ownerOf(id)) as ServiceProcess;
    const [other] = nodes.filter((n) => n !== owner) as [ServiceProcess];
    const client = graphqlWs(other.baseUrl, KEY);
    try {
      const heard = new Promise<string>((resolve, reject) => {
        client.subscribe<{ incomingMessages: { content: string } }>(
          { query: 'subscription($s: ID!) { incomingMessages(sessionId: $s) { content } }', variables: { s: id } },
          {
            next: (m) => {
              if (m.data) resolve(m.data.incomingMessages.content);
            },
            error: reject,
            complete: () => undefined,
          },
        );
      });
      const poll = call(other, 'GET', `/v1/sessions/${id}/incoming?waitMs=20000`);
      // The subscription is registered on its node (and so in Redis) once graphql-ws acknowledged it.
      await new Promise((r) => setTimeout(r, 500));
      await sandbox.control.sendText(FRIEND, PHONES[0] as string, 'across nodes');
      expect(await heard).toBe('across nodes');
      const polled = await poll;
      expect(polled.status).toBe(200);
      expect(polled.body.items.map((item: { content: string }) => item.content)).toEqual(['across nodes']);
    } finally {
      await client.dispose();
    }
  });

  it('a SIGKILLed node: its sessions come back CONNECTED on the others, a send it was carrying out is answered once, and a send through any node reaches the phone once', {
    timeout: 120_000,
  }, async () => {
    const victim = (await ownerOf(sessions[0] as string)) as ServiceProcess;
    const theirs = (await Promise.all(sessions.map(async (id) => ((await ownerOf(id)) === victim ? id : undefined)))).filter(
      (id): id is string => id !== undefined,
    );
    expect(theirs.length).toBeGreaterThan(0);
    // A send through another node, which the owner has recorded and is sending when it dies (its link gone
    // silent while it looks up the newcomer's devices). The client sent no Idempotency-Key: its one request must be answered once, with the
    // message it asked for, and the phone must show that message once.
    const [through] = live().filter((n) => n !== victim) as [ServiceProcess];
    expect(sandbox.control.freeze(PHONES[0] as string)).toBe(1);
    const inFlight = call(through, 'POST', `/v1/sessions/${sessions[0]}/send`, { to: NEWCOMER, message: 'carried out at the kill' });
    const record = await waitUntil(
      () => db.outgoingMessage.findFirst({ where: { content: 'carried out at the kill' } }),
      (r) => r?.status === 'PENDING',
      30_000,
    );
    await victim.stop('SIGKILL');
    // The dead node's advisory lock went with its connection: the others' next scan claims its sessions.
    await waitUntil(
      () => Promise.all(theirs.map(ownerOf)),
      (owners) => owners.every((o) => o !== undefined && o !== victim),
      30_000,
    );
    await allConnected(through);
    const answered = await inFlight;
    expect([answered.status, answered.body]).toEqual([200, { ok: true, id: record?.id }]);
    await arrived(NEWCOMER, 'carried out at the kill');
    expect(await db.outgoingMessage.count({ where: { content: 'carried out at the kill' } })).toBe(1);
    // A status read that reached a node first may have claimed more than its share; it hands the extra over.
    await balanced();
    for (const [i, id] of sessions.entries()) {
      const via = live()[i % 2] as ServiceProcess;
      const sent = await send(via, id, `after kill ${i}`);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }
    for (const i of PHONES.keys()) await arrived(FRIEND, `after kill ${i}`);
    for (const i of PHONES.keys()) expect(shown(FRIEND, `after kill ${i}`)).toMatchObject([{ duplicates: 0 }]);
    expect(shown(NEWCOMER, 'carried out at the kill')).toHaveLength(1);
    for (const phone of PHONES) expect(sandbox.control.phone(phone).devices).toHaveLength(1);
  });

  it('a node stopped past its lease fences itself when it runs again: its links closed, nothing sent twice', {
    timeout: 120_000,
  }, async () => {
    const id = sessions.find(() => true) as string;
    const paused = (await ownerOf(id)) as ServiceProcess;
    const phone = PHONES[sessions.indexOf(id)] as string;
    const before = (await db.sessionLease.findUniqueOrThrow({ where: { sessionId: id } })).epoch;
    // Due while the node is stopped: its timer fires when it runs again, after the new owner sent it.
    const scheduled = await call(paused, 'POST', `/v1/sessions/${id}/messages/schedule`, {
      to: FRIEND,
      message: 'due while stopped',
      delayMs: 1_000,
    });
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
    paused.child.kill('SIGSTOP');
    stopped.add(paused);
    const [survivor] = live() as [ServiceProcess];
    await waitUntil(
      async () => (await ownerOf(id)) !== paused,
      (moved) => moved,
      TTL_MS * 5,
    );
    await allConnected(survivor);
    await arrived(FRIEND, 'due while stopped');
    paused.child.kill('SIGCONT');
    stopped.delete(paused);
    // Once running, the node finds at its next renewal that its leases moved, and closes those links.
    const metrics = await waitUntil(
      () => http(paused.baseUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS}` } }),
      (r) => /wa_cluster_lease_losses_total [1-9]/.test(String(r.body)),
      TTL_MS * 5,
    );
    expect(String(metrics.body)).toMatch(/wa_cluster_lease_renewals_total [1-9]/);
    expect((await db.sessionLease.findUniqueOrThrow({ where: { sessionId: id } })).epoch).toBeGreaterThan(before);
    // The node back has room again: the other hands some sessions over, then a send through it goes out once.
    await balanced();
    const sent = await send(paused, id, 'after the pause');
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await arrived(FRIEND, 'after the pause');
    // Let the woken node's own timer for the scheduled message fire and find it sent.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(shown(FRIEND, 'due while stopped')).toMatchObject([{ duplicates: 0 }]);
    expect(shown(FRIEND, 'after the pause')).toMatchObject([{ duplicates: 0 }]);
    const record = await call(survivor, 'GET', `/v1/sessions/${id}/messages?status=PENDING`);
    expect(record.body.count).toBe(0);
    expect(sandbox.control.phone(phone).devices).toHaveLength(1);
  });

  it('a node that joins takes its share; a node stopped with SIGTERM hands its sessions over before it exits', {
    timeout: 120_000,
  }, async () => {
    const joined = await spawnService(env());
    nodes.push(joined);
    await balanced();
    const theirs = (await Promise.all(sessions.map(async (id) => ((await ownerOf(id)) === joined ? id : undefined)))).filter(
      (id): id is string => id !== undefined,
    );
    expect(theirs.length).toBe(Math.ceil(sessions.length / live().length));
    for (const [i, id] of sessions.entries()) {
      const sent = await send(joined, id, `after join ${i}`);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }
    expect(await joined.stop('SIGTERM')).toBe(0);
    await balanced();
    for (const [i, id] of sessions.entries()) {
      const sent = await send(live()[i % 2] as ServiceProcess, id, `after leave ${i}`);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }
    for (const i of PHONES.keys()) {
      await arrived(FRIEND, `after join ${i}`);
      await arrived(FRIEND, `after leave ${i}`);
    }
    for (const i of PHONES.keys()) {
      expect(shown(FRIEND, `after join ${i}`)).toMatchObject([{ duplicates: 0 }]);
      expect(shown(FRIEND, `after leave ${i}`)).toMatchObject([{ duplicates: 0 }]);
    }
    for (const phone of PHONES) expect(sandbox.control.phone(phone).devices).toHaveLength(1);
  });
});

describe.skipIf(!postgres)('the fencing epoch, two owners in one process (skipped when TEST_DATABASES excludes postgres)', () => {
  const ME = '15558881001';
  const ME2 = '15558881003';
  const TO = '15558881002';
  let sandbox: Sandbox;
  let database: TestDatabase;
  let app: TestApp;
  let other: Db;
  let first: PostgresOwnership;
  let second: PostgresOwnership;
  let key = '';
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  beforeAll(async () => {
    sandbox = await startSandbox();
    for (const n of [ME, ME2, TO]) sandbox.control.addPhone(n);
    database = await createTestDatabase('postgres');
    const db = createPrisma(database.url);
    // A long lease, so that the first node's own renewal (every 10 s) comes after the refused send.
    first = new PostgresOwnership({ db, databaseUrl: database.url, logger, ttlMs: 30_000 });
    app = await startTestApp(
      'postgres',
      { CLUSTER_SECRET: SECRET },
      { target: { sandbox: sandboxAddress(sandbox) }, ownership: first },
      { existing: database, makeDb: () => db },
    );
    await first.start({ gained: () => undefined, lost: (ids) => void app.deps.sessions.release(ids) });
    key = (await app.newAccount()).apiKey;
    other = createPrisma(database.url);
  }, 60_000);

  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await app?.close();
    await other?.$disconnect();
    await sandbox?.close();
    await database?.drop();
  });

  it('refuses a send by a node whose claim the database no longer holds, before its own clock tells it, then closes its link', {
    timeout: 60_000,
  }, async () => {
    const id = await linkThroughQr(app.baseUrl, key, sandbox, ME, 'fenced', 30_000);
    const send = (message: string) => http(app.baseUrl, 'POST', `/v1/sessions/${id}/send`, { key, body: { to: TO, message } });
    expect((await send('while mine')).status).toBe(200);
    await waitUntil(
      async () => sandbox.control.inbox(TO).map((e) => e.content),
      (t) => t.includes('while mine'),
    );
    // The first node's lease lapses (as if it had been cut off) and a second node claims the session.
    await other.$executeRawUnsafe(
      `UPDATE "SessionLease" SET "expiresAt" = (now() AT TIME ZONE 'UTC') - interval '1 second' WHERE "sessionId" = $1`,
      id,
    );
    second = new PostgresOwnership({ db: other, databaseUrl: database.url, logger, ttlMs: 6_000 });
    const claims = await second.start({ gained: () => undefined, lost: () => undefined });
    expect(claims).toEqual([{ sessionId: id, epoch: 2 }]);
    // The first node still holds its link and, by its own clock, the lease: the epoch check refuses.
    expect(first.owns(id)).toBe(true);
    const refused = await send('after the claim');
    expect(refused.status).toBe(409);
    // Nothing was written, so the client may send again at once: to the new owner, through any node.
    expect(refused.body).toEqual({
      ok: false,
      error: { code: 'SESSION_NOT_CONNECTED', message: 'The session is moving to another node; try again in a moment' },
    });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await app.db.outgoingMessage.count({ where: { sessionId: id, content: 'after the claim' } })).toBe(0);
    // Its next renewal finds the session gone and closes the link.
    await waitUntil(
      async () => first.owns(id) || app.deps.sessions.link(id) !== undefined,
      (holds) => !holds,
      20_000,
    );
    expect(first.counts.losses).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(sandbox.control.inbox(TO).filter((e) => e.content === 'after the claim')).toHaveLength(0);
  });

  it('leaves a scheduled message whose send failed after another node claimed the session to that node, instead of writing FAILED over its outcome', {
    timeout: 60_000,
  }, async () => {
    const id = await linkThroughQr(app.baseUrl, key, sandbox, ME2, 'fenced-scheduled', 30_000);
    // This node's scan writes the new session's lease.
    await waitUntil(
      () => other.sessionLease.findUnique({ where: { sessionId: id } }),
      (lease) => lease !== null,
      20_000,
    );
    const scheduled = await http(app.baseUrl, 'POST', `/v1/sessions/${id}/messages/schedule`, {
      key,
      body: { to: TO, message: 'due while paused', delayMs: 600_000 },
    });
    expect(scheduled.status).toBe(200);
    const messageId: string = scheduled.body.messageId;
    await app.db.outgoingMessage.update({ where: { id: messageId }, data: { sendAt: new Date(Date.now() - 1_000) } });
    // While the message is on its way this node stops (a pause): another node claims the session, and the
    // send fails as the link goes.
    const link = app.deps.sessions.link(id);
    if (!link) throw new Error('no link');
    const send = vi.spyOn(link, 'send').mockImplementation(async () => {
      await other.$executeRawUnsafe(
        `UPDATE "SessionLease" SET "nodeId" = 'the-new-owner', "epoch" = "epoch" + 1, "expiresAt" = (now() AT TIME ZONE 'UTC') + interval '1 minute' WHERE "sessionId" = $1`,
        id,
      );
      throw new Error('Connection Closed');
    });
    try {
      expect(await runDueMessage(app.deps, messageId)).toBeNull();
      expect(send).toHaveBeenCalledTimes(1);
    } finally {
      send.mockRestore();
    }
    // The new owner arms every PENDING record of the session when it takes it; this one is still there for it.
    const row = await app.db.outgoingMessage.findUniqueOrThrow({ where: { id: messageId } });
    expect({ status: row.status, error: row.error, claimedAt: row.claimedAt !== null }).toEqual({
      status: 'PENDING',
      error: null,
      claimedAt: true,
    });
  });
});

describe.skipIf(!postgres)(
  'Signal key and credential writes fenced by the epoch, two owners in one process (skipped without postgres)',
  () => {
    let database: TestDatabase;
    let oldDb: Db;
    let newDb: Db;
    let first: PostgresOwnership | undefined;
    let second: PostgresOwnership | undefined;
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
    const token = (text: string) => ({ token: Buffer.from(text), timestamp: '1' });
    const stored = async (sessionId: string, type: string, keyId: string) =>
      (await newDb.sessionAuth.findUnique({ where: { sessionId_type_keyId: { sessionId, type, keyId } } }))?.value;
    /** The text of a stored tctoken (its Buffer is kept as base64 in the row). */
    const tokenText = async (sessionId: string) =>
      Buffer.from(JSON.parse((await stored(sessionId, 'tctoken', 'peer')) ?? '{}').token?.data ?? '', 'base64').toString();

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      oldDb = createPrisma(database.url);
      newDb = createPrisma(database.url);
    }, 60_000);

    afterAll(async () => {
      await second?.stop();
      await first?.stop();
      await oldDb?.$disconnect();
      await newDb?.$disconnect();
      await database?.drop();
    });

    it("refuses the stale owner's key and credential writes once another node claimed the session; the new owner's stay", {
      timeout: 60_000,
    }, async () => {
      const account = await oldDb.account.create({ data: { email: 'fence@example.com', apiKeyHash: 'h' } });
      const id = (await oldDb.session.create({ data: { accountId: account.id, sessionName: 'fenced keys' } })).id;
      first = new PostgresOwnership({ db: oldDb, databaseUrl: database.url, logger, ttlMs: 30_000 });
      expect(await first.start({ gained: () => undefined, lost: () => undefined })).toEqual([{ sessionId: id, epoch: 1 }]);
      const oldFence = first.fence(id);
      expect(oldFence).toEqual({ nodeId: first.nodeId, epoch: 1 });
      let oldFenced = 0;
      const stale = await loadAuthState(oldDb, id, logger, undefined, {
        fence: oldFence as Fence,
        onFenced: () => {
          oldFenced += 1;
        },
      });
      // While it holds the session its writes land, keys and credentials.
      await stale.state.keys.set({ tctoken: { peer: token('old 1') }, 'pre-key': { '1': Curve.generateKeyPair() } });
      stale.state.creds.nextPreKeyId = 111;
      await stale.saveCreds();
      await stale.flush();
      expect(await tokenText(id)).toBe('old 1');
      expect(JSON.parse((await stored(id, 'creds', '')) ?? '{}').nextPreKeyId).toBe(111);

      // Its lease lapses (as if it had been paused) and a second node claims the session, epoch 2.
      await newDb.$executeRawUnsafe(
        `UPDATE "SessionLease" SET "expiresAt" = (now() AT TIME ZONE 'UTC') - interval '1 second' WHERE "sessionId" = $1`,
        id,
      );
      second = new PostgresOwnership({ db: newDb, databaseUrl: database.url, logger, ttlMs: 30_000 });
      expect(await second.start({ gained: () => undefined, lost: () => undefined })).toEqual([{ sessionId: id, epoch: 2 }]);
      let newFenced = 0;
      const current = await loadAuthState(newDb, id, logger, undefined, {
        fence: second.fence(id) as Fence,
        onFenced: () => {
          newFenced += 1;
        },
      });
      // The new owner reads what the old one wrote before the claim, then moves on.
      expect(current.state.creds.nextPreKeyId).toBe(111);
      expect(Object.keys(await current.state.keys.get('pre-key', ['1']))).toEqual(['1']);
      await current.state.keys.set({ tctoken: { peer: token('new 2') }, 'pre-key': { '1': null } });
      current.state.creds.nextPreKeyId = 222;
      await current.saveCreds();
      await current.flush();

      // The old owner, by its own clock still the owner, writes its older state: refused, and its link is told once.
      expect(first.owns(id)).toBe(true);
      await stale.state.keys.set({ tctoken: { peer: token('old 3') }, 'pre-key': { '1': Curve.generateKeyPair() } });
      await stale.flush();
      expect(oldFenced).toBe(1);
      stale.state.creds.nextPreKeyId = 333;
      await stale.saveCreds();
      await stale.state.keys.set({ tctoken: { peer: token('old 4') } });
      await stale.flush();
      expect(oldFenced).toBe(1);
      expect(newFenced).toBe(0);

      expect(await tokenText(id)).toBe('new 2');
      expect(await stored(id, 'pre-key', '1')).toBeUndefined();
      expect(JSON.parse((await stored(id, 'creds', '')) ?? '{}').nextPreKeyId).toBe(222);
      const reloaded = await loadAuthState(newDb, id);
      expect(Buffer.from((await reloaded.state.keys.get('tctoken', ['peer'])).peer?.token ?? []).toString()).toBe('new 2');
    });

    it('writes the pre-keys of several links in one turn in several statements of one transaction, each fenced', {
      timeout: 60_000,
    }, async () => {
      // No node claims these sessions but the leases written below.
      await second?.stop();
      await first?.stop();
      second = undefined;
      first = undefined;
      const account = await newDb.account.create({ data: { email: 'fence-many@example.com', apiKeyHash: 'h2' } });
      const ids = await Promise.all(
        ['a', 'b', 'c'].map(async (name) => (await newDb.session.create({ data: { accountId: account.id, sessionName: name } })).id),
      );
      // Leases as a node would hold them; the third is another node's now.
      for (const [i, sessionId] of ids.entries()) {
        await newDb.$executeRawUnsafe(
          `INSERT INTO "SessionLease" ("sessionId", "nodeId", epoch, "expiresAt") VALUES ($1, $2, 3, (now() AT TIME ZONE 'UTC') + interval '1 hour')`,
          sessionId,
          i < 2 ? 'this node' : 'another node',
        );
      }
      let fenced = 0;
      const stores = await Promise.all(
        ids.map((sessionId) =>
          loadAuthState(oldDb, sessionId, logger, undefined, {
            fence: { nodeId: 'this node', epoch: 3 },
            onFenced: () => {
              fenced += 1;
            },
          }),
        ),
      );
      // 812 pre-keys each, as a device links: 2,436 rows, past the 2,000 of one statement.
      const preKeys = Object.fromEntries(Array.from({ length: 812 }, (_, i) => [String(i + 1), Curve.generateKeyPair()]));
      await Promise.all(stores.map((store) => store.state.keys.set({ 'pre-key': preKeys })));
      await Promise.all(stores.map((store) => store.flush()));
      expect(fenced).toBe(1);
      const counts = await Promise.all(ids.map((sessionId) => newDb.sessionAuth.count({ where: { sessionId, type: 'pre-key' } })));
      expect(counts).toEqual([812, 812, 0]);
    });
  },
);
