import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { sentMarks } from '../../src/runtime/db/outgoing-writes.ts';
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
      sentMessage: 'AQID',
    });
    const statement = sentMarks('sqlite')([mark(pending.id, pending.waMessageId), mark(failed.id, failed.waMessageId)]);

    const plan = await db.$queryRawUnsafe<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${statement.sql}`, ...statement.values);
    const steps = plan.map((step) => step.detail);
    expect(steps.filter((step) => step.includes('OutgoingMessage'))).toEqual([
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
});
