import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrisma, providerOf } from '../../src/runtime/db/client.ts';
import { draftMigration } from '../../src/runtime/db/migration-drafts.ts';
import { applyMigrations, migrationAdapterFor, prismaDir, readMigrations } from '../../src/runtime/db/migrate.ts';
import { NO_FILTERS, withSchemaEngine } from '../../src/runtime/db/schema-engine.ts';
import type { TemporaryDatabase } from '../../src/runtime/db/temporary-database.ts';
import { createTemporaryDatabase } from '../../src/runtime/db/temporary-database.ts';

const run = promisify(execFile);
const tsx = (...args: string[]) => run(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env } });

describe.each(['sqlite', 'postgres'] as const)('migrations on %s', (kind) => {
  const databases: TemporaryDatabase[] = [];
  afterAll(async () => {
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('applies every migration to a fresh database, serves reads and writes, and applies nothing twice', async () => {
    const database = await createTemporaryDatabase(kind);
    databases.push(database);
    expect(providerOf(database.url)).toBe(kind);

    const names = readMigrations(kind).migrationDirectories.map((d) => d.path);
    expect(names.length).toBeGreaterThan(0);
    expect(await applyMigrations(database.url)).toEqual(names);

    const db = createPrisma(database.url);
    try {
      const created = await db.account.create({ data: { email: `${kind}@example.com`, apiKeyHash: `hash-${kind}` } });
      const read = await db.account.findUnique({ where: { email: `${kind}@example.com` } });
      expect(read).toMatchObject({ id: created.id, apiKeyHash: `hash-${kind}` });
      expect(read?.createdAt).toBeInstanceOf(Date);
    } finally {
      await db.$disconnect();
    }

    expect(await applyMigrations(database.url)).toEqual([]);
  });

  it('moves each waiting webhook event into its deliveries, unchanged, when the event table goes', async () => {
    const database = await createTemporaryDatabase(kind);
    databases.push(database);
    const all = readMigrations(kind);
    const at = all.migrationDirectories.findIndex((d) => d.path.endsWith('_webhook_payload_in_delivery'));
    expect(at).toBeGreaterThan(0);
    const before = { ...all, migrationDirectories: all.migrationDirectories.slice(0, at) };
    await withSchemaEngine(migrationAdapterFor(database.url), (engine) =>
      engine.applyMigrations({ migrationsList: before, filters: NO_FILTERS }),
    );

    const db = createPrisma(database.url);
    try {
      const data = JSON.stringify({ content: 'héllo "quoted" \\ 👋', at: 1 });
      const createdAt = new Date('2026-11-25T10:00:00.000Z');
      await db.$executeRaw`INSERT INTO "WebhookEvent" ("id", "accountId", "sessionId", "type", "data", "createdAt") VALUES ('msg_1', 'acc', 's1', 'message.received', ${data}, ${createdAt})`;
      for (const endpoint of ['e1', 'e2'])
        await db.$executeRaw`INSERT INTO "WebhookDelivery" ("id", "eventId", "endpointId", "accountId", "sessionId", "status", "attempts", "nextAttemptAt", "createdAt")
          VALUES (${`msg_1_${endpoint}`}, 'msg_1', ${endpoint}, 'acc', 's1', 'PENDING', 0, ${createdAt}, ${createdAt})`;
      expect(await applyMigrations(database.url)).toEqual(all.migrationDirectories.slice(at).map((d) => d.path));
      const rows = await db.webhookDelivery.findMany({ orderBy: { id: 'asc' } });
      expect(rows.map((r) => ({ id: r.id, type: r.type, data: r.data, status: r.status, createdAt: r.createdAt }))).toEqual(
        ['e1', 'e2'].map((e) => ({ id: `msg_1_${e}`, type: 'message.received', data, status: 'PENDING', createdAt })),
      );
    } finally {
      await db.$disconnect();
    }
  });

  it('drafts nothing for the committed schema, and a migration for a schema change that keeps hand-written SQL', async () => {
    expect((await draftMigration(kind, 'none')).script).toBeNull();

    const schema = readFileSync(join(prismaDir(kind), 'schema.prisma'), 'utf8');
    const changed = schema.replace(/^model DailyUsage \{$/m, 'model DailyUsage {\n  note String @default("")');
    expect(changed).not.toBe(schema);
    const { script } = await draftMigration(kind, 'note', undefined, changed);
    expect(script).toMatch(/"DailyUsage"/);
    expect(script).toMatch(/"note"/);
    expect(script).not.toMatch(/DROP INDEX|DROP TABLE "ContactSearch/);
  });
});

describe('npm run db', () => {
  it('check finds the committed migrations current for both providers', async () => {
    const { stdout } = await tsx('src/runtime/db/migrate-cli.ts', 'check');
    expect(stdout).toContain('migrations match the schema for sqlite and postgres');
  });

  it('deploy applies to DATABASE_URL and the process ends on its own, without waiting on engine timers', async () => {
    const database = await createTemporaryDatabase('postgres');
    try {
      const script = `import { applyMigrations } from './src/runtime/db/migrate.ts'; await applyMigrations(${JSON.stringify(database.url)});`;
      const started = performance.now();
      await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
      // The engine arms a 10 s timer; an unref'd one lets the process end as soon as the work is done.
      expect(performance.now() - started).toBeLessThan(8000);
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/runtime/db/migrate-cli.ts', 'deploy'], {
        env: { ...process.env, DATABASE_URL: database.url },
      });
      expect(stdout).toContain('the database schema is current');
    } finally {
      await database.drop();
    }
  });
});
