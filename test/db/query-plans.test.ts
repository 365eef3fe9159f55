import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/sqlite/client.ts';
import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { sentMarks } from '../../src/runtime/db/outgoing-writes.ts';
import { leaseRenewal } from '../../src/runtime/jobs/webhook-delivery.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';

// SQLite only: its planner has no statistics and picks an index by the shape of the statement, so a
// batch statement can walk a whole index for every batch. PostgreSQL plans with statistics of its own.
describe('batch statements find their rows by key (sqlite)', () => {
  let database: TestDatabase;
  let db: Db;
  let sessionId: string;
  let accountId: string;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    db = createPrisma(database.url);
    accountId = (await db.account.create({ data: { email: 'plans@example.com', apiKeyHash: 'h' } })).id;
    sessionId = (await db.session.create({ data: { accountId, sessionName: 'main' } })).id;
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  /**
   * The steps of a statement's plan, read over a connection of its own: SQLite never runs an EXPLAIN to
   * its halt, so it stays in progress until finalized, and a transaction committed on the same
   * connection meanwhile would fail.
   */
  const planOf = async (statement: Prisma.Sql): Promise<string[]> => {
    const reader = createPrisma(database.url);
    try {
      const plan = await reader.$queryRawUnsafe<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${statement.sql}`, ...statement.values);
      return plan.map((step) => step.detail);
    } finally {
      await reader.$disconnect();
    }
  };

  const record = (status: string, sendAt: Date | null = null) => ({
    id: randomUUID(),
    accountId,
    sessionId,
    toNumber: '15550002222',
    content: 'hi',
    status,
    sendAt,
    waMessageId: `3EB0${randomUUID().slice(0, 8)}`,
  });

  it('marks SENT by primary key while a thousand scheduled records are PENDING, and leaves a FAILED record alone', async () => {
    const later = new Date(Date.now() + 3_600_000);
    await db.outgoingMessage.createMany({ data: Array.from({ length: 1_000 }, () => record('PENDING', later)) });
    const pending = record('PENDING');
    const failed = record('FAILED');
    await db.outgoingMessage.createMany({ data: [pending, failed] });
    const at = new Date('2026-11-26T10:00:00.000Z');
    const mark = (id: string, waMessageId: string) => ({
      id,
      sentAt: at,
      waMessageId,
      remoteJid: '15550002222@s.whatsapp.net',
      toLid: null,
      sentMessage: 'AQID',
    });
    const statement = sentMarks('sqlite')([mark(pending.id, pending.waMessageId), mark(failed.id, failed.waMessageId)]);

    expect((await planOf(statement)).filter((step) => step.includes('OutgoingMessage'))).toEqual([
      'SEARCH OutgoingMessage USING INDEX sqlite_autoindex_OutgoingMessage_1 (id=?)',
    ]);

    expect(await db.$executeRaw(statement)).toBe(1);
    const rows = await db.outgoingMessage.findMany({ where: { id: { in: [pending.id, failed.id] } } });
    expect(rows.map((r) => [r.id, r.status, r.sentAt?.toISOString() ?? null, r.sentMessage])).toEqual(
      expect.arrayContaining([
        [pending.id, 'SENT', at.toISOString(), 'AQID'],
        [failed.id, 'FAILED', null, null],
      ]),
    );
    expect(await db.outgoingMessage.count({ where: { status: 'PENDING' } })).toBe(1_000);
  });

  it('renews the leases of held webhook deliveries by id while a thousand others wait, and leaves a delivered one alone', async () => {
    const delivery = (status: string, claimedUntil: Date | null) => ({
      id: randomUUID(),
      eventId: randomUUID(),
      endpointId: 'endpoint',
      accountId,
      status,
      claimedUntil,
    });
    const soon = new Date(Date.now() + 10_000);
    await db.webhookDelivery.createMany({ data: Array.from({ length: 1_000 }, () => delivery('PENDING', null)) });
    const held = delivery('PENDING', soon);
    const done = delivery('DELIVERED', soon);
    await db.webhookDelivery.createMany({ data: [held, done] });
    const until = new Date(Date.now() + 60_000);
    const statement = leaseRenewal('sqlite')([held.id, done.id], until);

    expect((await planOf(statement)).filter((step) => step.includes('WebhookDelivery'))).toEqual([
      'SEARCH WebhookDelivery USING INDEX sqlite_autoindex_WebhookDelivery_1 (id=?)',
    ]);

    expect(await db.$executeRaw(statement)).toBe(1);
    const rows = await db.webhookDelivery.findMany({ where: { id: { in: [held.id, done.id] } } });
    expect(Object.fromEntries(rows.map((r) => [r.id, r.claimedUntil?.getTime()]))).toEqual({
      [held.id]: until.getTime(),
      [done.id]: soon.getTime(),
    });
  });

  it('purges expired idempotency keys through the createdAt index, without reading the keys still kept', async () => {
    const day = 24 * 3_600_000;
    await db.idempotentRequest.createMany({
      data: Array.from({ length: 1_000 }, (_, i) => ({
        accountId,
        key: `k${i}`,
        route: 'POST /v1/sessions/s/send',
        status: 200,
        body: '{}',
        createdAt: new Date(Date.now() - (i % 2 === 0 ? 2 * day : 0)),
      })),
    });
    // the statement Prisma makes of the purge's deleteMany (resolvers/idempotency.ts)
    const purge = Prisma.sql`DELETE FROM \`main\`.\`IdempotentRequest\` WHERE \`main\`.\`IdempotentRequest\`.\`createdAt\` < ${new Date(Date.now() - day)}`;
    expect(await planOf(purge)).toEqual(['SEARCH main.IdempotentRequest USING INDEX IdempotentRequest_createdAt_idx (createdAt<?)']);
    await db.idempotentRequest.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - day) } } });
    expect(await db.idempotentRequest.count()).toBe(500);
  });
});
