import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fencedBlocks, section } from './helpers/markdown.ts';

/**
 * The README's walkthrough, run as written: its first shell block (`npm run demo`) is started as a
 * process, every later shell block runs in one bash (so K, B, C, S and QR carry from block to block),
 * and the output of each is checked against the JSON block that follows it in the README. The only
 * change is the addresses: the demo listens on free ports here, so `http://localhost:3000` and
 * `http://127.0.0.1:4011` become the ones it printed; DATABASE_URL points at a fresh database.
 */

const README = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
const TITLE = 'Five minutes with the sandbox';
const API = 'http://localhost:3000';
const CONTROL = 'http://127.0.0.1:4011';

interface Step {
  commands: string;
  /** the answers the README shows for the block's commands, one JSON value per printing command */
  answers?: unknown[];
  line: number;
}

/** Consecutive JSON values, as curl prints them one after another (with or without newlines between). */
export const jsonValues = (text: string): unknown[] => {
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i] ?? '')) {
      i++;
      continue;
    }
    const start = i;
    if (text[i] !== '{' && text[i] !== '[') throw new Error(`not JSON at ${i}: ${text.slice(i, i + 80)}`);
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) {
          i++;
          break;
        }
      }
    }
    values.push(JSON.parse(text.slice(start, i)));
  }
  return values;
};

/**
 * Does `actual` fit the README's abridged `documented` answer? Objects: the documented keys, with
 * matching values (others may be there); arrays: the same length, item by item; `"…"`: any value;
 * a string ending in `…`: a string that starts so.
 */
export const fits = (documented: unknown, actual: unknown): boolean => {
  if (documented === '…') return actual !== undefined;
  if (typeof documented === 'string' && documented.endsWith('…')) {
    return typeof actual === 'string' && actual.startsWith(documented.slice(0, -1));
  }
  if (Array.isArray(documented)) {
    return Array.isArray(actual) && actual.length === documented.length && documented.every((d, i) => fits(d, actual[i]));
  }
  if (documented !== null && typeof documented === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(documented).every(([k, v]) => fits(v, (actual as Record<string, unknown>)[k]));
  }
  return documented === actual;
};

const walkthrough = (): { start: string; steps: Step[] } => {
  const blocks = fencedBlocks(section(README, TITLE));
  const [first, ...rest] = blocks;
  const steps: Step[] = [];
  for (const block of rest) {
    if (block.lang === 'sh') steps.push({ commands: block.text, line: block.line });
    else if (block.lang === 'json') {
      const step = steps.at(-1);
      if (!step || step.answers) throw new Error(`a JSON block with no shell block before it (README line ${block.line} of the section)`);
      step.answers = jsonValues(block.text);
    }
  }
  if (first?.lang !== 'sh') throw new Error('the walkthrough starts with no shell block');
  return { start: first.text.trim(), steps };
};

/** A block that only reads can be run again: a reader is slower than this test. */
const onlyReads = (commands: string): boolean => !/-X\s*(POST|PATCH|PUT|DELETE)|\s-d\s|npm run/.test(commands);

const haveTools = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v curl && command -v jq'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!haveTools)("the README's walkthrough, run as written (needs curl and jq)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'walkthrough-'));
  const env = { ...process.env, DATABASE_URL: `file:${join(dir, 'app.db')}`, LOG_LEVEL: 'info' };
  let demo: ChildProcess | undefined;
  let shell: ChildProcess | undefined;

  afterAll(() => {
    shell?.kill('SIGKILL');
    // npm runs the service as its child: stop the whole group this test started.
    if (demo?.pid && demo.exitCode === null) process.kill(-demo.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('each command answers what the README shows', async () => {
    const { start, steps } = walkthrough();
    expect(start).toBe('npm run demo');
    expect(steps.length).toBeGreaterThanOrEqual(6);
    const allCommands = steps.map((s) => s.commands).join('\n');
    expect(allCommands).toContain(API);
    expect(allCommands).toContain(CONTROL);

    // 1. The demo, as the README starts it, on free ports.
    demo = spawn('bash', ['-c', start], {
      env: { ...env, PORT: '0', HOST: '127.0.0.1', SANDBOX_CONTROL_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    demo.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    demo.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const { apiUrl, controlUrl } = await new Promise<{ apiUrl: string; controlUrl: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the demo did not start:\n${out}`)), 60_000);
      const check = () => {
        const port = /"port":(\d+),[^\n]*"msg":"listening"/.exec(out)?.[1];
        const control = /control API at (http:\/\/[^\s]+)/.exec(out)?.[1];
        if (port && control) {
          clearTimeout(timer);
          resolve({ apiUrl: `http://127.0.0.1:${port}`, controlUrl: control });
        }
      };
      demo?.stdout?.on('data', check);
      demo?.on('exit', () => reject(new Error(`the demo exited:\n${out}`)));
    });

    // 2. Every later block, in order, in one shell.
    const bash = spawn('bash', ['--noprofile', '--norc'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    shell = bash;
    let stdout = '';
    let stderr = '';
    bash.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    bash.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    let runs = 0;
    const run = async (commands: string): Promise<{ output: string; status: number }> => {
      const marker = `__walkthrough_${++runs}__`;
      const from = stdout.length;
      bash.stdin?.write(`${commands.replaceAll(API, apiUrl).replaceAll(CONTROL, controlUrl)}\nprintf '\\n${marker} %d\\n' $?\n`);
      const deadline = Date.now() + 60_000;
      for (;;) {
        const at = stdout.indexOf(marker, from);
        if (at >= 0) {
          const status = Number(/^ (\d+)/.exec(stdout.slice(at + marker.length))?.[1]);
          return { output: stdout.slice(from, at), status };
        }
        if (Date.now() > deadline)
          throw new Error(`no end of block after 60 s:\n${commands}\nstdout:\n${stdout.slice(from)}\nstderr:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    for (const step of steps) {
      const retryUntil = Date.now() + (onlyReads(step.commands) ? 15_000 : 0);
      for (;;) {
        const { output, status } = await run(step.commands);
        const context = `README walkthrough block:\n${step.commands}\nprinted:\n${output}\nstderr:\n${stderr}`;
        expect(status, context).toBe(0);
        if (!step.answers) break;
        const printed = jsonValues(output);
        const ok = printed.length === step.answers.length && step.answers.every((a, i) => fits(a, printed[i]));
        if (ok || Date.now() > retryUntil) {
          expect(ok, `${context}\nexpected answers like:\n${step.answers.map((a) => JSON.stringify(a)).join('\n')}`).toBe(true);
          break;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }, 240_000);
});
