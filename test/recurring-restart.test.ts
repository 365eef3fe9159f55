import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { occurrenceRecordId } from '../src/resolvers/recurring.ts';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const ME = '15557780001';
const TO = '15557780011';
const EVERY_MS = 1000;
const DAY_MS = 24 * 3600 * 1000;

describe.each(dbKinds)('recurring timers are rows: they outlive a SIGKILL (%s)', (kind) => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let db: Db;
  let service: ServiceProcess | undefined;
  let sessionId = '';

  const env = () => ({
    DATABASE_URL: database.url,
    WA_SANDBOX_URL: sandbox.controlUrl,
    BOOTSTRAP_EMAIL: 'ops@example.com',
    BOOTSTRAP_API_KEY: KEY,
    RECURRING_MIN_MS: '500',
  });
  const call = (method: string, path: string, body?: unknown) => http(service?.baseUrl ?? '', method, path, { key: KEY, body });
  const kill = async () => {
    await service?.stop('SIGKILL');
    service = await spawnService(env());
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
      60_000,
    );
  };
  const ticks = () => sandbox.control.inbox(TO).filter((e) => e.content === 'tick');

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    db = await createPrisma(database.url);
    for (const n of [ME, TO]) sandbox.control.addPhone(n);
    service = await spawnService(env());
    sessionId = await linkThroughQr(service.baseUrl, KEY, sandbox, ME, 'recurring', 60_000);
  }, 180_000);
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await db?.$disconnect();
    await sandbox?.close();
    await database?.drop();
  });

  it('fires again after a restart, each occurrence once; list and cancel work from the rows', async () => {
    const base = `/v1/sessions/${sessionId}/messages/recurring`;
    const tick = await call('POST', base, { to: TO, message: 'tick', everyMs: EVERY_MS });
    expect(tick.status).toBe(200);
    const monthly = await call('POST', `/v1/sessions/${sessionId}/status/recurring`, {
      payload: { type: 'text', text: 'monthly status', statusJidList: [TO] },
      everyMs: 30 * DAY_MS,
    });
    expect(monthly.status).toBe(200);
    const listed = await call('GET', base);
    expect(listed.body.count).toBe(2);
    expect(listed.body.items.map((i: { timerId: string }) => i.timerId)).toEqual([tick.body.timerId, monthly.body.timerId]);
    await waitUntil(
      async () => ticks().length,
      (n) => n >= 2,
      30_000,
    );

    await kill();
    const before = ticks().length;
    await waitUntil(
      async () => ticks().length,
      (n) => n >= before + 2,
      30_000,
    );
    expect((await call('GET', base)).body).toEqual(listed.body);

    expect((await call('DELETE', `${base}/${tick.body.timerId}`)).body).toEqual({ ok: true });
    // A message due two intervals after the cancel: no tick arrives after it.
    const marker = await call('POST', `/v1/sessions/${sessionId}/messages/schedule`, { to: TO, message: 'marker', delayMs: 2 * EVERY_MS });
    expect(marker.status).toBe(200);
    await waitUntil(
      async () => sandbox.control.inbox(TO).map((e) => e.content),
      (contents) => contents.includes('marker'),
      30_000,
    );
    const contents = sandbox.control.inbox(TO).map((e) => e.content);
    expect(contents.slice(contents.indexOf('marker') + 1).filter((c) => c === 'tick')).toEqual([]);

    // Each occurrence is one record, named by the timer and its time, and one message on the phone.
    const timer = await db.recurringTimer.findUniqueOrThrow({ where: { id: tick.body.timerId } });
    expect(timer.cancelledAt).not.toBeNull();
    const records = await db.outgoingMessage.findMany({ where: { sessionId, content: 'tick' } });
    const occurrences = new Set(
      Array.from({ length: 600 }, (_, k) => occurrenceRecordId(timer.id, new Date(timer.createdAt.getTime() + (k + 1) * EVERY_MS))),
    );
    expect(records.every((r) => occurrences.has(r.id) && r.status === 'SENT')).toBe(true);
    expect(ticks().length).toBe(records.length);
    // A message the kill cut off between the phone and its SENT mark goes again with its network id: the
    // phone counts it as a duplicate of the same message, and shows it once.
    const sentIds = new Set(records.map((r) => r.waMessageId));
    expect(ticks().every((e) => sentIds.has(e.id) && e.duplicates <= 1)).toBe(true);
    expect(new Set(ticks().map((e) => e.id)).size).toBe(records.length);

    await kill();
    expect((await call('GET', base)).body).toEqual({ count: 1, items: [listed.body.items[1]] });
    expect((await call('DELETE', `${base}/${monthly.body.timerId}`)).body).toEqual({ ok: true });
    expect((await call('GET', base)).body).toEqual({ count: 0, items: [] });
    expect((await call('DELETE', `${base}/${monthly.body.timerId}`)).status).toBe(404);
  }, 300_000);
});
