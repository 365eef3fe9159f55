import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

const exitCode = async (command: string, args: string[], env: Record<string, string> = {}) => {
  try {
    await run(command, args, { env: { ...process.env, ...env }, timeout: 120_000 });
    return 0;
  } catch (err) {
    return (err as { code?: number }).code ?? 1;
  }
};

describe('committed generated files are current', () => {
  it('schema.graphql and the types of the dashboard operations match the Pothos schema (npm run codegen)', async () => {
    expect(await exitCode('npx', ['graphql-codegen', '--config', 'codegen.ts', '--check'], { NODE_OPTIONS: '--import=tsx' })).toBe(0);
  });

  it('docs/configuration.md matches the settings schema (npm run docs)', async () => {
    expect(await exitCode('npx', ['tsx', 'scripts/config-doc.ts', '--check'])).toBe(0);
  });

  it('the per-provider Prisma schemas match prisma/schema.base.prisma', async () => {
    expect(await exitCode('node', ['scripts/sync-schemas.mjs', '--check'])).toBe(0);
  });
});
