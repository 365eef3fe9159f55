import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';
import type { Sandbox } from '../src/runtime/sandbox/sandbox.ts';
import { startSandbox } from '../src/runtime/sandbox/sandbox.ts';
import { http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { ServiceProcess } from './helpers/process.ts';
import { spawnService } from './helpers/process.ts';
import { linkThroughQr } from './helpers/sandbox.ts';

const KEY = `wak_${randomUUID()}`;
const SHARED = '15557880001';
const OTHER = '15557880002';
const FRIEND = '15557880009';
const COUNT = 10;

const texts = (prefix: string) => Array.from({ length: COUNT }, (_, i) => `${prefix} ${i}`);

describe('sessions linked to one phone, and sessions writing to each other, all at once', () => {
  let sandbox: Sandbox;
  let database: TestDatabase;
  let service: ServiceProcess | undefined;
  const call = (method: string, path: string, body?: unknown) => http(service?.baseUrl ?? '', method, path, { key: KEY, body });

  beforeAll(async () => {
    sandbox = await startSandbox();
    database = await createTestDatabase('sqlite');
    for (const n of [SHARED, OTHER, FRIEND]) sandbox.control.addPhone(n);
  });
  afterAll(async () => {
    await service?.stop('SIGKILL');
    await sandbox?.close();
    await database?.drop();
  });

  it('delivers every text and its copies on the other linked device, and logs nothing at error level', { timeout: 120_000 }, async () => {
    // The service as it runs (its links on the network thread), so that its log is the whole of what it writes.
    service = await spawnService({
      DATABASE_URL: database.url,
      WA_SANDBOX_URL: sandbox.controlUrl,
      BOOTSTRAP_EMAIL: 'shared@example.com',
      BOOTSTRAP_API_KEY: KEY,
    });
    const { baseUrl } = service;
    const a = await linkThroughQr(baseUrl, KEY, sandbox, SHARED, 'a');
    const b = await linkThroughQr(baseUrl, KEY, sandbox, SHARED, 'b');
    const d = await linkThroughQr(baseUrl, KEY, sandbox, SHARED, 'd');
    const c = await linkThroughQr(baseUrl, KEY, sandbox, OTHER, 'c');

    // The first messages between two devices each set up a Signal session with the other, both at once:
    // a, b and d (one phone's companions) through their copies of what each sends, a and c by writing
    // to each other.
    const sends = Array.from({ length: COUNT }, (_, i) => [
      [a, FRIEND, `a to friend ${i}`],
      [b, FRIEND, `b to friend ${i}`],
      [d, FRIEND, `d to friend ${i}`],
      [a, OTHER, `a to c ${i}`],
      [c, SHARED, `c to a ${i}`],
    ]).flat();
    const answers = await Promise.all(sends.map(([id, to, message]) => call('POST', `/v1/sessions/${id}/send`, { to, message })));
    expect(answers.map((r) => r.status)).toEqual(sends.map(() => 200));

    const expected = {
      [a]: [...texts('b to friend'), ...texts('d to friend'), ...texts('c to a')],
      [b]: [...texts('a to friend'), ...texts('d to friend'), ...texts('a to c'), ...texts('c to a')],
      [d]: [...texts('a to friend'), ...texts('b to friend'), ...texts('a to c'), ...texts('c to a')],
      [c]: texts('a to c'),
    };
    const sessions = [a, b, d, c];
    const received = new Map<string, Set<string>>(sessions.map((id) => [id, new Set<string>()]));
    const missing = () => sessions.flatMap((id) => (expected[id] ?? []).filter((t) => !received.get(id)?.has(t)).map((t) => `${id}: ${t}`));
    const until = Date.now() + 30_000;
    while (missing().length > 0 && Date.now() < until) {
      await Promise.all(
        sessions.map(async (id) => {
          const res = await call('GET', `/v1/sessions/${id}/incoming?waitMs=1000&limit=200`);
          for (const item of res.body.items as Json[]) received.get(id)?.add(item.content);
        }),
      );
    }
    expect(missing()).toEqual([]);
    const atFriend = sandbox.control.inbox(FRIEND).map((e) => e.content);
    expect(atFriend).toEqual(expect.arrayContaining([...texts('a to friend'), ...texts('b to friend'), ...texts('d to friend')]));

    const errors = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Json)
      .filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
  });
});
