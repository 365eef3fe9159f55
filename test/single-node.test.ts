import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';

const KEY = `wak_${randomUUID()}`;

describe('SQLite is one node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'single-node-'));
  const env = { DATABASE_URL: `file:${join(dir, 'app.db')}`, BOOTSTRAP_EMAIL: 'one@example.com', BOOTSTRAP_API_KEY: KEY };
  const running: ServiceProcess[] = [];

  afterAll(async () => {
    for (const service of running) await service.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second node on the same database file with what to do instead, and leaves the first one working', async () => {
    const first = await spawnService(env);
    running.push(first);
    const second = spawnService(env);
    await expect(second).rejects.toThrow(/Another node of this service is running on .*app\.db.*SQLite allows one node.*PostgreSQL/s);
    expect((await http(first.baseUrl, 'GET', '/v1/sessions', { key: KEY })).status).toBe(200);
  });

  it('starts again once the first node is gone, however it ended', async () => {
    const first = running.pop() as ServiceProcess;
    await first.stop('SIGKILL');
    const again = await spawnService(env);
    running.push(again);
    expect((await http(again.baseUrl, 'GET', '/v1/sessions', { key: KEY })).status).toBe(200);
  });
});
