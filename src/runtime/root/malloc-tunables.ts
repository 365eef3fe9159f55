import { DEFAULT_V8_SEMI_SPACE_MB } from '../settings.ts';

/**
 * glibc's malloc keeps what a burst of work freed: blocks above its mmap threshold move that threshold
 * up (to 32 MB at most), so later large blocks come from the heap and stay mapped after they are freed.
 * Starting, migrating and linking free tens of megabytes of such blocks (SQLite, libsql, TLS, Node's
 * buffers). With the thresholds fixed at 128 KiB, large blocks are mapped on their own and unmapped when
 * freed: the process after start and one link measured 30–55 MB smaller (docs/benchmarks-peers.md).
 */
export const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072';

/**
 * The environment to start again with, or null to go on as is: only on glibc (elsewhere the variable
 * means nothing), and never over GLIBC_TUNABLES the operator set (any value, even empty, is theirs).
 */
export const tunedEnvironment = (env: NodeJS.ProcessEnv, glibcVersion: string | undefined): NodeJS.ProcessEnv | null =>
  glibcVersion && env.GLIBC_TUNABLES === undefined ? { ...env, GLIBC_TUNABLES: MALLOC_TUNABLES } : null;

const glibcVersion = (): string | undefined => {
  if (process.platform !== 'linux') return undefined;
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  return report.header?.glibcVersionRuntime;
};

/**
 * V8 sizes its young generation once, when the process starts: the `--max-semi-space-size` option for
 * V8_SEMI_SPACE_MB (its default when unset), or null when it is `0` (V8's own sizing), not a whole number
 * (the settings refuse it once loaded), or when the operator set the option in Node's own options.
 */
export const semiSpaceOption = (env: NodeJS.ProcessEnv, execArgv: string[]): string | null => {
  const raw = env.V8_SEMI_SPACE_MB?.trim();
  const mb = raw ? Number(raw) : DEFAULT_V8_SEMI_SPACE_MB;
  if (!Number.isInteger(mb) || mb <= 0) return null;
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((option) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(option))) return null;
  return `--max-semi-space-size=${mb}`;
};

/**
 * glibc reads its tunables once, when the process starts, and V8 its young generation's limit: the
 * same process (same pid, same stdio) becomes a fresh Node.js with the variable and the option set,
 * given the same options and arguments. Returns when nothing is to change.
 */
export const restartWithMallocTunables = (): void => {
  if (!process.execve) return;
  const env = tunedEnvironment(process.env, glibcVersion());
  const semiSpace = semiSpaceOption(process.env, process.execArgv);
  if (env || semiSpace)
    process.execve(
      process.execPath,
      [process.execPath, ...(semiSpace ? [semiSpace] : []), ...process.execArgv, ...process.argv.slice(1)],
      env ?? { ...process.env },
    );
};
