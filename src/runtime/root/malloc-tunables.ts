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
 * glibc reads its tunables once, when the process starts: the same process (same pid, same stdio)
 * becomes a fresh Node.js with the variable set, given the same options and arguments. Returns when
 * nothing is to change.
 */
export const restartWithMallocTunables = (): void => {
  if (!process.execve) return;
  const env = tunedEnvironment(process.env, glibcVersion());
  if (env) process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
};
