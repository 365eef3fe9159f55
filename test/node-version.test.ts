import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../src/runtime/node-version.ts';

// The machine's own Node (outside node_modules/.bin), when it is older than the one the project brings.
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path));
const systemMajor = systemNode ? Number(execFileSync(systemNode, ['-p', 'process.versions.node']).toString().split('.')[0]) : null;
const olderNode = systemNode && systemMajor !== null && systemMajor < 24 ? systemNode : undefined;

describe('the Node.js version', () => {
  it('runs the suite on Node.js 24 or newer', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
  });

  it('names the version found and how to run the service when Node is older than 24', () => {
    expect(nodeVersionProblem('v20.20.2', '/usr/bin/node')).toBe(
      'This service needs Node.js 24 or newer; this is v20.20.2 (/usr/bin/node).\n' +
        'Run it through npm (npm start, npm test, npm run ...), which uses the Node.js 24 that npm install put in node_modules/.bin, or install Node.js 24 LTS.\n',
    );
    expect(nodeVersionProblem('v24.21.0', '/x/node')).toBeNull();
    expect(nodeVersionProblem('v26.0.0', '/x/node')).toBeNull();
  });

  // Needs a Node older than 24 on the machine to start the service with; ours have Node 20.
  it.skipIf(!olderNode)('stops at once under an older Node, before touching the database', { timeout: 90_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'node-version-'));
    try {
      const run = spawnSync(olderNode as string, ['--import', 'tsx', 'src/runtime/root/main.ts'], {
        env: { ...process.env, DATABASE_URL: `file:${join(dir, 'app.db')}`, PORT: '0' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`This service needs Node.js 24 or newer; this is v${systemMajor}.`);
      expect(existsSync(join(dir, 'app.db'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
