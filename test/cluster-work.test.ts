import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/runtime/db/client.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import type { InboxEntry } from '../src/runtime/sandbox/directory.ts';
import { dbKinds } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { callAsClient, clusterEnv, liveNodes, ownerOf as clusterOwnerOf, startClusterGround, stopCluster } from './helpers/cluster.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const SECRET = `cluster-${randomUUID()}`;
const PHONES = ['15558890001', '15558890002', '15558890003', '15558890004'];
const FRIENDS = ['15558890091', '15558890092', '15558890093', '15558890094'];
const SCHEDULED = 900;
const CAMPAIGN = 50;
const TOTAL = SCHEDULED + 2 * CAMPAIGN;

// Several nodes share one PostgreSQL database; SQLite is a single node by design (test/single-node.test.ts).
const postgres = dbKinds.includes('postgres');

describe.skipIf(!postgres)('scheduled and campaign work across a SIGKILLed node (skipped when TEST_DATABASES excludes postgres)', () => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let db: Db;
  let receiver: Receiver;
  const nodes: ServiceProcess[] = [];
  const sessions: string[] = [];

  const env = () => ({
    ...clusterEnv({ databaseUrl: database.url, sandboxUrl: sandbox.controlUrl, key: KEY, secret: SECRET }),
    DAILY_QUOTA: '0',
    RATE_LIMIT_REQUESTS: '0',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Each node reads an account's endpoints at most this long ago (docs/operations.md): the sends start after it.
    WEBHOOK_ENDPOINT_CACHE_MS: '1000',
  });
  const call = (node: ServiceProcess, method: string, path: string, body?: unknown) => callAsClient(node.baseUrl, KEY, method, path, body);
  const live = () => liveNodes(nodes);
  const ownerOf = (sessionId: string) => clusterOwnerOf(db, nodes, sessionId);

  beforeAll(async () => {
    ({ sandbox, database, db } = await startClusterGround([...PHONES, ...FRIENDS]));
    receiver = await startReceiver();
    for (let i = 0; i < 3; i++) nodes.push(await spawnService(env()));
  }, 120_000);

  afterAll(async () => {
    await stopCluster({ nodes, receiver, db, sandbox, database });
  });

  it('sends each of 1,000 scheduled and campaign messages once, none left PENDING, and a message.sent event for each', {
    timeout: 300_000,
  }, async () => {
    for (const [i, phone] of PHONES.entries()) {
      sessions.push(await linkThroughQr(nodes[i % 3]?.baseUrl ?? '', KEY, sandbox, phone, `w${i}`, 30_000));
    }
    const hook = await call(nodes[0] as ServiceProcess, 'POST', '/v1/webhooks', { url: receiver.url, events: ['message.sent'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.verifyWith(hook.body.secret);
    // Every node knows the new endpoint once its cached read of the account's endpoints is older than the bound.
    await new Promise((r) => setTimeout(r, 1_500));

    const start = Date.now();
    const texts: string[] = [];
    const messageIds: string[] = [];
    // Two campaigns, one message every 400 ms each: 20 s of sends.
    for (const c of [0, 1]) {
      const res = await call(nodes[(c + 1) % 3] as ServiceProcess, 'POST', `/v1/sessions/${sessions[c]}/messages/campaign`, {
        contacts: Array.from({ length: CAMPAIGN }, (_, j) => ({ jid: FRIENDS[j % FRIENDS.length], name: `${c}-${j}` })),
        template: 'campaign {name}',
        delayMs: 400,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.count).toBe(CAMPAIGN);
      for (let j = 0; j < CAMPAIGN; j++) texts.push(`campaign ${c}-${j}`);
    }
    // 900 scheduled messages, due from 6 s to 28 s after the start, across the sessions, sent through any node.
    const schedule = async (i: number) => {
      const sendAt = new Date(start + 6_000 + Math.floor((i * 22_000) / SCHEDULED)).toISOString();
      const res = await call(nodes[i % 3] as ServiceProcess, 'POST', `/v1/sessions/${sessions[i % sessions.length]}/messages/schedule`, {
        to: FRIENDS[i % FRIENDS.length],
        message: `scheduled ${i}`,
        sendAt,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      messageIds.push(res.body.messageId);
    };
    for (let i = 0; i < SCHEDULED; i += 20) {
      await Promise.all(Array.from({ length: Math.min(20, SCHEDULED - i) }, (_, k) => schedule(i + k)));
    }
    for (let i = 0; i < SCHEDULED; i++) texts.push(`scheduled ${i}`);
    const scheduledBy = Date.now() - start;

    // The node owning the most sessions dies in the middle of the sends.
    const owners = await Promise.all(sessions.map(ownerOf));
    const victim = nodes.reduce((a, b) => (owners.filter((o) => o === b).length > owners.filter((o) => o === a).length ? b : a));
    const theirs = sessions.filter((_, i) => owners[i] === victim);
    await new Promise((r) => setTimeout(r, Math.max(0, start + 16_000 - Date.now())));
    const pendingAtKill = await db.outgoingMessage.count({ where: { sessionId: { in: theirs }, status: 'PENDING' } });
    const shownAtKill = FRIENDS.reduce((n, f) => n + sandbox.control.inbox(f).length, 0);
    await victim.stop('SIGKILL');
    const killedAt = Date.now();
    // The kill is in the middle: some messages had gone, and the dead node's sessions still had work due.
    expect(theirs.length).toBeGreaterThan(1);
    expect(pendingAtKill).toBeGreaterThan(0);
    expect(shownAtKill).toBeGreaterThan(0);
    expect(shownAtKill).toBeLessThan(TOTAL);

    const shown = () =>
      new Map<string, InboxEntry>(FRIENDS.flatMap((f) => sandbox.control.inbox(f).map((e) => [`${f}|${e.content}`, e] as const)));
    const expected = texts.map((t, i) => {
      const friend = t.startsWith('campaign')
        ? FRIENDS[Number(t.split('-')[1]) % FRIENDS.length]
        : FRIENDS[(i - 2 * CAMPAIGN) % FRIENDS.length];
      return `${friend}|${t}`;
    });
    const all = await waitUntil(
      async () => {
        const map = shown();
        return expected.filter((k) => !map.has(k)).length;
      },
      (missing) => missing === 0,
      120_000,
    ).catch(() => -1);
    // Let anything that would go twice arrive before counting.
    await new Promise((r) => setTimeout(r, 2_000));
    const entries = FRIENDS.flatMap((f) =>
      sandbox.control.inbox(f).filter((e) => e.content.startsWith('scheduled ') || e.content.startsWith('campaign ')),
    );
    const missing = expected.filter((k) => !shown().has(k));
    const records = await db.outgoingMessage.groupBy({ by: ['status'], where: { sessionId: { in: sessions } }, _count: true });
    const context = JSON.stringify({
      scheduledBy,
      shownAtKill,
      pendingAtKill,
      victimSessions: theirs.length,
      missing: missing.slice(0, 10),
      missingCount: missing.length,
      records,
      all,
    });
    expect(missing, context).toEqual([]);
    // Each once as the user sees it: one entry per text.
    expect(entries.length, context).toBe(TOTAL);
    // A message on the wire at the kill (on the phone, not yet recorded SENT by the dead node) is sent again
    // by the new owner under the same network id: the sandbox counts the repeat, the phone shows it once.
    // Without pacing a session has several sends in flight at once, so that may be a few messages, each of
    // the dead node's sessions, each once more, each first arrived before the kill and recorded SENT after
    // it. Nothing else repeats.
    const repeats = entries.filter((e) => e.duplicates > 0);
    const repeated = await db.outgoingMessage.findMany({
      where: { waMessageId: { in: repeats.map((e) => e.id) } },
      select: { waMessageId: true, sessionId: true, sentAt: true },
    });
    const figures = JSON.stringify({
      killedAt,
      repeats: repeats.map((e) => ({ content: e.content, duplicates: e.duplicates, receivedAt: e.receivedAt })),
      repeated,
    });
    expect(repeated.length, figures).toBe(repeats.length);
    for (const e of repeats) {
      const record = repeated.find((r) => r.waMessageId === e.id);
      expect(e.duplicates, figures).toBe(1);
      expect(theirs, figures).toContain(record?.sessionId);
      expect(Date.parse(e.receivedAt), figures).toBeLessThanOrEqual(killedAt);
      expect(record?.sentAt?.getTime() ?? 0, figures).toBeGreaterThanOrEqual(killedAt - 1_000);
    }
    expect(records, context).toEqual([{ status: 'SENT', _count: TOTAL }]);
    if (process.env.CLUSTER_DEBUG) console.log(context, figures);
    for (const id of sessions) {
      const pending = await call(live()[0] as ServiceProcess, 'GET', `/v1/sessions/${id}/messages?status=PENDING`);
      expect(pending.body.count).toBe(0);
    }
    // A message.sent event for every message (at least once; deduplicating by event id is the receiver's).
    const sentIds = (await db.outgoingMessage.findMany({ where: { sessionId: { in: sessions } }, select: { id: true } })).map((r) => r.id);
    expect(messageIds.every((id) => sentIds.includes(id))).toBe(true);
    const heard = await waitUntil(
      async () => new Set(receiver.received.filter((r) => r.payload.type === 'message.sent').map((r) => String(r.payload.data.messageId))),
      (ids) => sentIds.every((id) => ids.has(id)),
      60_000,
    ).catch(() => new Set<string>(receiver.received.map((r) => String(r.payload.data.messageId))));
    const unheard = await db.outgoingMessage.findMany({
      where: { id: { in: sentIds.filter((id) => !heard.has(id)) } },
      select: { content: true, sentAt: true, sessionId: true },
    });
    const deliveries = await db.webhookDelivery.groupBy({ by: ['status'], _count: true });
    const stuck = await Promise.all(
      sentIds
        .filter((id) => !heard.has(id))
        .map((id) =>
          db.webhookDelivery.findMany({
            where: { data: { contains: id } },
            select: { status: true, attempts: true, claimedUntil: true, nextAttemptAt: true, createdAt: true, sessionId: true },
          }),
        ),
    );
    expect(unheard, JSON.stringify({ deliveries, stuck, now: new Date(), victimSessions: theirs })).toEqual([]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
  });
});
