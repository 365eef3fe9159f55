import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../src/resolvers/accounts.ts';
import { createPrisma } from '../src/runtime/db/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { createTestDatabase } from '../src/runtime/db/testing.ts';
import type { TestDatabase } from '../src/runtime/db/testing.ts';

const run = promisify(execFile);

describe('npm run account', () => {
  let database: TestDatabase;
  let db: Db;
  const cli = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/runtime/root/cli/account.ts', ...args], {
      env: { ...process.env, DATABASE_URL: database.url },
    });

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    db = await createPrisma(database.url);
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  it('creates an account and prints its key once; rotation replaces the key', async () => {
    const created = await cli('create', '--email', 'cli@example.com');
    const key = /API key: (\S+)/.exec(created.stdout)?.[1] ?? '';
    expect(key).toMatch(/^wak_/);
    expect((await authenticate({ db }, key)).email).toBe('cli@example.com');

    const rotated = await cli('rotate', '--email', 'cli@example.com');
    const newKey = /New API key for \S+: (\S+)/.exec(rotated.stdout)?.[1] ?? '';
    expect(newKey).toMatch(/^wak_/);
    expect(newKey).not.toBe(key);
    // a fresh process has no cache: the old key is refused, the new one works
    const fresh = await createPrisma(database.url);
    await expect(authenticate({ db: fresh }, key)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await authenticate({ db: fresh }, newKey)).email).toBe('cli@example.com');
    await fresh.$disconnect();

    const listed = await cli('list');
    expect(listed.stdout).toContain('cli@example.com');
    expect(listed.stdout).not.toContain(newKey);
    await expect(cli('create', '--email', 'cli@example.com')).rejects.toMatchObject({ code: 1 });
  });
});
