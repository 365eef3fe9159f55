import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MALLOC_TUNABLES, semiSpaceOption, tunedEnvironment } from '../src/runtime/root/malloc-tunables.ts';
import { DEFAULT_V8_SEMI_SPACE_MB } from '../src/runtime/settings.ts';
import { spawnService } from './helpers/process.ts';

const environOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

describe("glibc's malloc thresholds and V8's semi-space limit", () => {
  const dir = mkdtempSync(join(tmpdir(), 'malloc-tunables-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are set on glibc when the operator set no GLIBC_TUNABLES, and left alone otherwise', () => {
    expect(tunedEnvironment({ PATH: '/bin' }, '2.36')).toEqual({ PATH: '/bin', GLIBC_TUNABLES: MALLOC_TUNABLES });
    expect(tunedEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, '2.36')).toBeNull();
    expect(tunedEnvironment({ GLIBC_TUNABLES: '' }, '2.36')).toBeNull();
    // musl, macOS: the variable means nothing there
    expect(tunedEnvironment({ PATH: '/bin' }, undefined)).toBeNull();
  });

  it("V8's semi-space limit: the setting (its default when unset) unless 0 or already among Node's options", () => {
    expect(semiSpaceOption({}, [])).toBe(`--max-semi-space-size=${DEFAULT_V8_SEMI_SPACE_MB}`);
    expect(semiSpaceOption({ V8_SEMI_SPACE_MB: '16' }, [])).toBe('--max-semi-space-size=16');
    expect(semiSpaceOption({ V8_SEMI_SPACE_MB: '0' }, [])).toBeNull();
    // not a whole number: left to the settings, which refuse it at start
    expect(semiSpaceOption({ V8_SEMI_SPACE_MB: 'big' }, [])).toBeNull();
    expect(semiSpaceOption({}, ['--max-semi-space-size=4'])).toBeNull();
    expect(semiSpaceOption({ NODE_OPTIONS: '--enable-source-maps --max_semi_space_size=2' }, [])).toBeNull();
  });

  it.runIf(process.platform === 'linux')(
    'reach the running service: the same process (same pid) holds them, and it serves and gives back what starting left',
    // two starts of the service, each about 50 s on a machine shared with other work
    { timeout: 240_000 },
    async () => {
      expect(process.env.GLIBC_TUNABLES).toBeUndefined();
      const service = await spawnService({ DATABASE_URL: `file:${join(dir, 'app.db')}` });
      try {
        // glibc 2.36 rewrites the variable in place as it parses it (a NUL after the first value), so
        // the environment shows the first tunable; `ld.so --list-tunables` shows both take effect.
        expect(environOf(service.child.pid as number).GLIBC_TUNABLES).toMatch(/^glibc\.malloc\.mmap_threshold=131072\b/);
        expect(readFileSync(`/proc/${service.child.pid}/cmdline`, 'utf8').split('\0')).toContain(
          `--max-semi-space-size=${DEFAULT_V8_SEMI_SPACE_MB}`,
        );
        expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);
        await expect.poll(() => service.output(), { timeout: 20_000 }).toContain('"msg":"started: memory given back"');
      } finally {
        expect(await service.stop()).toBe(0);
      }
      const own = await spawnService({
        DATABASE_URL: `file:${join(dir, 'app.db')}`,
        GLIBC_TUNABLES: 'glibc.malloc.arena_max=2',
        V8_SEMI_SPACE_MB: '0',
      });
      try {
        expect(environOf(own.child.pid as number).GLIBC_TUNABLES).toBe('glibc.malloc.arena_max=2');
        expect(readFileSync(`/proc/${own.child.pid}/cmdline`, 'utf8')).not.toContain('semi-space');
      } finally {
        await own.stop();
      }
    },
  );
});
