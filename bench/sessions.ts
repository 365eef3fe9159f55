import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { linkSession, startWithSandbox } from '../test/helpers/sandbox.ts';

const COUNT = 50;

const collect = (): (() => void) => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
};

/** Collects the garbage of both heaps: this thread's and the network thread's (which `gc` here does not reach). */
const settle = async (gc: () => void, sessions: { collectGarbage: () => Promise<void> }) => {
  for (let i = 0; i < 3; i++) {
    gc();
    await sessions.collectGarbage();
    await new Promise((r) => setTimeout(r, 200));
  }
};

export interface SessionBenchResult {
  count: number;
  linkSeconds: number;
  rssPerSessionMb: number;
  /** what the first linked session added, network thread included */
  firstSessionMb: number;
  heapPerSessionMb: number;
}

/** Links 50 sessions in one process, then measures what each idle linked session costs. */
export const benchSessions = async (): Promise<SessionBenchResult> => {
  const gc = collect();
  const ctx = await startWithSandbox('sqlite');
  try {
    await settle(gc, ctx.app.deps.sessions);
    const empty = process.memoryUsage();
    // The first link starts the network thread (its own V8 heap, Baileys and a database client): a
    // fixed cost, measured apart so it is not spread over the sessions.
    await linkSession(ctx, '15569999999', 'first');
    await new Promise((r) => setTimeout(r, 3_000));
    await settle(gc, ctx.app.deps.sessions);
    const before = process.memoryUsage();
    const started = performance.now();
    for (let i = 0; i < COUNT; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, COUNT - i) }, (_, k) =>
          linkSession(ctx, `1557000${String(i + k).padStart(4, '0')}`, `b${i + k}`),
        ),
      );
    }
    const linkSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 3_000));
    await settle(gc, ctx.app.deps.sessions);
    const after = process.memoryUsage();
    return {
      count: COUNT,
      linkSeconds,
      rssPerSessionMb: (after.rss - before.rss) / COUNT / 2 ** 20,
      firstSessionMb: (before.rss - empty.rss) / 2 ** 20,
      heapPerSessionMb: (after.heapUsed - before.heapUsed) / COUNT / 2 ** 20,
    };
  } finally {
    await ctx.app.close();
    await ctx.sandbox.close();
  }
};

export const printSessionBench = (r: SessionBenchResult): void => {
  console.log(
    `sessions: linked ${r.count} in ${r.linkSeconds.toFixed(1)} s (${((r.linkSeconds * 1000) / r.count).toFixed(0)} ms each); ` +
      `resident memory per linked idle session ${r.rssPerSessionMb.toFixed(2)} MB (heap ${r.heapPerSessionMb.toFixed(2)} MB; target <= 2 MB; ` +
      `the first session with the network thread ${r.firstSessionMb.toFixed(0)} MB; ` +
      'includes the in-process sandbox phone and companion state)',
  );
};
