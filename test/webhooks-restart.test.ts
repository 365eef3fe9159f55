import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const EVENTS = 40;

describe.each(dbKinds)('webhook events across a SIGKILL (%s)', (kind) => {
  let database: TestDatabase;
  let receiver: Receiver;
  let service: ServiceProcess | undefined;
  const env = () => ({
    DATABASE_URL: database.url,
    BOOTSTRAP_EMAIL: 'hooks@example.com',
    BOOTSTRAP_API_KEY: KEY,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_BASE_MS: '100',
    WEBHOOK_RETRY_MAX_MS: '500',
    WEBHOOK_POLL_MS: '100',
  });
  const call = (method: string, path: string, body?: unknown) => http(service?.baseUrl ?? '', method, path, { key: KEY, body });

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await receiver?.close();
    await database?.drop();
  });

  it('delivers every event accepted before the kill after the restart: 0 lost, ids unchanged', async () => {
    service = await spawnService(env());
    const hook = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['*'] });
    expect(hook.status).toBe(201);
    receiver.verifyWith(hook.body.secret);
    const accepted: string[] = [];
    const accept = async () => {
      const res = await call('POST', `/v1/webhooks/${hook.body.id}/test`);
      expect(res.status).toBe(200);
      accepted.push(res.body.eventId);
    };
    for (let i = 0; i < EVENTS / 2; i++) await accept();
    await waitUntil(
      async () => receiver.received.length,
      (n) => n > 0,
    );
    // The receiver stops answering: the requests in flight at the kill never get their answer.
    receiver.setMode({ kind: 'hang' });
    for (let i = 0; i < EVENTS / 2; i++) await accept();
    const before = receiver.requests;
    await waitUntil(
      async () => receiver.requests,
      (n) => n > before,
    );
    await service.stop('SIGKILL');

    receiver.setMode({ kind: 'ok' });
    service = await spawnService(env());
    const got = await waitUntil(
      async () => new Set(receiver.received.map((r) => r.id)),
      (ids) => accepted.every((id) => ids.has(id)),
      30_000,
    );
    const lost = accepted.filter((id) => !got.has(id));
    expect(lost).toEqual([]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    // A delivery is marked DELIVERED once its answer is read, a moment after the receiver has it.
    const log = await waitUntil(
      () => call('GET', `/v1/webhooks/${hook.body.id}/deliveries?limit=100`),
      (r) => r.body.length === EVENTS && r.body.every((d: { status: string }) => d.status === 'DELIVERED'),
    ).catch(() => call('GET', `/v1/webhooks/${hook.body.id}/deliveries?limit=100`));
    expect(log.body).toHaveLength(EVENTS);
    expect(log.body.every((d: { status: string }) => d.status === 'DELIVERED')).toBe(true);
  }, 120_000);
});
