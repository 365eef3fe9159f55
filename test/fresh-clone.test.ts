import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks, section } from './helpers/markdown.ts';

/**
 * The README's first command on a fresh clone of this repository: what is committed at HEAD, with no
 * ./data, no dist/, no generated Prisma clients, no .env and no settings. The other tests start the
 * service from this checkout with a database of their own, so they cannot see what only a fresh
 * clone lacks (issue 44: the single-node lock was opened before anything made ./data).
 *
 * The one shortcut is the download part of `npm install`: the clone's node_modules is a link to this
 * checkout's (already installed and patched from the same package-lock.json), and the install's own
 * step for the project, the `postinstall` npm runs after the packages are in place (patch-package, which
 * finds the patches applied and writes nothing, the Prisma clients, dist/), runs in the clone as
 * `npm run postinstall`. A real `npm install` here takes minutes and needs the registry; this takes
 * about 30 s and leaves everything a fresh clone lacks to the clone itself. `npm start` then runs as
 * written, through the machine's npm, with only PORT=0 set so it cannot collide with another service.
 */

const ROOT = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: import.meta.dirname, encoding: 'utf8' }).trim();

// A user's shell: the machine's npm and Node, not the Node 24 this test runs on (npm puts the clone's
// node_modules/.bin first itself), and no variable of the service's.
const bareEnv = (): Record<string, string> => ({
  PATH: (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !dir.includes('node_modules'))
    .join(delimiter),
  HOME: process.env.HOME ?? tmpdir(),
});

interface Started {
  child: ChildProcess;
  apiUrl: string;
  output: () => string;
}

/** Runs an npm script in its own process group (npm runs the service as its child) until it listens. */
const startScript = async (cwd: string, script: string, env: Record<string, string>, waitFor: RegExp[] = []): Promise<Started> => {
  const child = spawn('npm', ['run', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run ${script} did not start:\n${out}`)), 60_000);
    const check = () => {
      const listening = /"port":(\d+),[^\n]*"msg":"listening"/.exec(out)?.[1];
      if (listening && waitFor.every((re) => re.test(out))) {
        clearTimeout(timer);
        resolve(listening);
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm run ${script} exited (${code}):\n${out}`));
    });
  });
  return { child, apiUrl: `http://127.0.0.1:${port}`, output: () => out };
};

const stopGroup = async (child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, signal);
  await exited;
};

describe("a fresh clone: the README's first command", () => {
  const dir = mkdtempSync(join(tmpdir(), 'fresh-clone-'));
  const clone = join(dir, 'app');
  let running: ChildProcess | undefined;

  beforeAll(() => {
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
  });

  afterAll(async () => {
    await stopGroup(running, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('npm install && npm start serves /healthz and the first account with no ./data and no settings', async () => {
    const first = fencedBlocks(section(readFileSync(join(clone, 'README.md'), 'utf8'), 'Two commands'))[0]?.text.split('\n')[0];
    expect(first?.replace(/#.*/, '').trim()).toBe('npm install && npm start');
    for (const absent of ['data', 'dist', '.env', 'src/generated', 'node_modules'])
      expect(existsSync(join(clone, absent)), absent).toBe(false);

    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    const env = bareEnv();
    execFileSync('npm', ['run', 'postinstall'], { cwd: clone, env, stdio: 'pipe', timeout: 300_000 });

    const service = await startScript(clone, 'start', { ...env, PORT: '0' }, [/^API key \(shown once, keep it\): wak_/m]);
    running = service.child;
    const health = await fetch(`${service.apiUrl}/healthz`);
    expect(health.status, service.output()).toBe(200);
    // The first start's account, created in ./data/app.db, answers with the key it printed.
    const key = /^API key \(shown once, keep it\): (wak_\S+)$/m.exec(service.output())?.[1] ?? '';
    const me = await fetch(`${service.apiUrl}/v1/accounts/me`, { headers: { 'x-api-key': key } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ email: 'admin@example.com', apiKey: key });
    expect(existsSync(join(clone, 'data', 'app.db'))).toBe(true);
    await stopGroup(running);
  }, 360_000);

  it('npm run demo serves the API and the sandbox with no ./data', async () => {
    expect(existsSync(join(clone, 'dist', '.built')), 'the previous test built dist/').toBe(true);
    // As a clone that has never started: the walkthrough's "to start over, delete ./data".
    rmSync(join(clone, 'data'), { recursive: true, force: true });
    const demo = await startScript(clone, 'demo', { ...bareEnv(), PORT: '0', SANDBOX_CONTROL_PORT: '0' }, [/control API at http:\/\/\S+/]);
    running = demo.child;
    expect((await fetch(`${demo.apiUrl}/healthz`)).status, demo.output()).toBe(200);
    const control = /control API at (http:\/\/\S+)/.exec(demo.output())?.[1];
    const phones = await fetch(`${control}/phones`);
    expect(phones.status).toBe(200);
    expect(await phones.json()).toEqual([]);
    await stopGroup(running);
  }, 120_000);
});
