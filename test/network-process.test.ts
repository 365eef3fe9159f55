import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { dbKinds, http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { childPids, isRunning } from './helpers/proc.ts';
import { linkThroughQr, waitUntil } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;

// The compiled service, as `npm start` runs it, with its links in a network process (`NETWORK_MODE=process`).
describe.each(dbKinds)('the network process of a SIGKILLed service (%s)', (kind) => {
  const me = kind === 'sqlite' ? '15556680001' : '15556680101';
  const friend = kind === 'sqlite' ? '15556680002' : '15556680102';
  let sandbox: Sandbox;
  let database: TestDatabase;
  let service: ServiceProcess | undefined;
  const env = () => ({
    NETWORK_MODE: 'process',
    DATABASE_URL: database.url,
    WA_SANDBOX_URL: sandbox.controlUrl,
    BOOTSTRAP_EMAIL: 'ops@example.com',
    BOOTSTRAP_API_KEY: KEY,
  });
  const call = (method: string, path: string, body?: unknown) => http(service?.baseUrl ?? '', method, path, { key: KEY, body });

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase(kind);
    sandbox.control.addPhone(me);
    sandbox.control.addPhone(friend);
  });
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await sandbox?.close();
    await database?.drop();
  });

  it('exits with its parent, so the restarted service links alone and sends', { timeout: 120_000 }, async () => {
    service = await spawnService(env());
    const servicePid = service.child.pid as number;
    // No network process before the first link.
    expect(childPids(servicePid)).toEqual([]);
    const sessionId = await linkThroughQr(service.baseUrl, KEY, sandbox, me, 'orphan-check', 30_000);
    const [networkPid, ...others] = childPids(servicePid);
    expect(others).toEqual([]);
    expect(isRunning(networkPid as number)).toBe(true);

    await service.stop('SIGKILL');
    // Its IPC channel closed with the parent: the network process ends its links and exits by itself.
    await waitUntil(
      async () => isRunning(networkPid as number),
      (running) => !running,
      5_000,
    );

    service = await spawnService(env());
    await waitUntil(
      () => call('GET', `/v1/sessions/${sessionId}/status`),
      (r) => r.body.status === 'CONNECTED',
      60_000,
    );
    expect(sandbox.control.phone(me).devices).toHaveLength(1);
    const sent = await call('POST', `/v1/sessions/${sessionId}/send`, { to: friend, message: 'from the restarted service' });
    expect(sent.status).toBe(200);
    const inbox = await waitUntil(
      async () => sandbox.control.inbox(friend).filter((e) => e.content === 'from the restarted service'),
      (entries) => entries.length === 1,
    );
    expect(inbox[0]?.duplicates).toBe(0);
    // A SIGTERM stops both.
    const restartedPid = service.child.pid as number;
    const [nextNetworkPid] = childPids(restartedPid);
    expect(nextNetworkPid).toBeGreaterThan(0);
    expect(await service.stop('SIGTERM')).toBe(0);
    service = undefined;
    await waitUntil(
      async () => isRunning(nextNetworkPid as number),
      (running) => !running,
      10_000,
    );
  });
});
