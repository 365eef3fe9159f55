import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, providerOf } from '../../src/runtime/db/client.ts';
import type { Db } from '../../src/runtime/db/client.ts';
import { jsonRows } from '../../src/runtime/db/json-rows.ts';
import { createTestDatabase } from '../../src/runtime/db/testing.ts';
import type { TestDatabase } from '../../src/runtime/db/testing.ts';
import { dbKinds } from '../helpers/app.ts';

// Batch writes carry their rows as one JSON parameter: what is read back must be exactly what was
// written, and their times must compare with times Prisma wrote.
describe.each(dbKinds)('rows written as one JSON parameter (%s)', (kind) => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = createPrisma(database.url);
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  it('reads back every text, number, null and time as written, and orders the times with those Prisma wrote', async () => {
    const table = jsonRows(providerOf(database.url), [
      ['id', 'text'],
      ['deliveryId', 'text'],
      ['statusCode', 'integer'],
      ['latencyMs', 'integer'],
      ['responseExcerpt', 'text'],
      ['error', 'text'],
      ['at', 'timestamp'],
    ]);
    const t0 = new Date('2026-11-24T10:00:00.000Z');
    const rows = [
      ['a1', 'd1', 204, 0, '😀 "quoted" \\ back\nslash\ttab', null, new Date(t0.getTime() + 1)],
      ['a2', 'd1', null, 2_000_000_000, '{"looks": ["like", "json"]}', "it's ünïcödé — ok", new Date(t0.getTime() + 999)],
      ['a3', 'd2', 500, 7, '', 'x'.repeat(5_000), new Date(t0.getTime() + 60_000)],
    ] as const;
    await db.$executeRaw`INSERT INTO "WebhookAttempt" ("id", "deliveryId", "endpointId", "eventId", "statusCode", "latencyMs", "responseExcerpt", "error", "at")
      SELECT "id", "deliveryId", 'e', 'v', "statusCode", "latencyMs", "responseExcerpt", "error", "at" FROM (${table(rows.map((r) => [...r]))}) AS r`;
    // one written by Prisma between the first two
    await db.webhookAttempt.create({
      data: { id: 'p1', deliveryId: 'd1', endpointId: 'e', eventId: 'v', latencyMs: 1, at: new Date(t0.getTime() + 500) },
    });

    const read = await db.webhookAttempt.findMany({ where: { id: { startsWith: 'a' } }, orderBy: { id: 'asc' } });
    expect(read.map((r) => [r.id, r.deliveryId, r.statusCode, r.latencyMs, r.responseExcerpt, r.error, r.at])).toEqual(
      rows.map((r) => [...r]),
    );
    const inWindow = await db.webhookAttempt.findMany({
      where: { at: { gte: new Date(t0.getTime() + 1), lte: new Date(t0.getTime() + 999) } },
      orderBy: { at: 'asc' },
    });
    expect(inWindow.map((r) => r.id)).toEqual(['a1', 'p1', 'a2']);
  });
});
