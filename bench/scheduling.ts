import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { JobScheduler } from '../src/runtime/jobs/scheduler.ts';
import { jobContext } from '../src/resolvers/context.ts';
import { resumeScheduled, runDueMessage, scheduleMessage } from '../src/resolvers/scheduling.ts';
import { linkSession, startWithSandbox } from '../test/helpers/sandbox.ts';

const COUNT = 10_000;
const WINDOW_MS = 60_000;
const LEAD_MS = 40_000;

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};

/**
 * 10,000 messages scheduled into the same minute: how late each fires, how long a restart takes to
 * reload them, and whether each recipient got each exactly once.
 */
export const benchScheduling = async () => {
  const ctx = await startWithSandbox('sqlite', { DAILY_QUOTA: 0 });
  try {
    const sessionId = await linkSession(ctx, '15590100001');
    const recipients = Array.from({ length: 20 }, (_, i) => `155901002${String(i).padStart(2, '0')}`);
    for (const n of recipients) ctx.sandbox.control.addPhone(n);
    const session = await ctx.app.db.session.findUniqueOrThrow({ where: { id: sessionId } });
    const rctx = jobContext(ctx.app.deps, session.accountId);

    const start = Date.now() + LEAD_MS;
    const scheduling = performance.now();
    for (let i = 0; i < COUNT; i++) {
      await scheduleMessage(rctx, sessionId, {
        to: recipients[i % recipients.length],
        message: `scheduled ${i}`,
        sendAt: new Date(start + Math.floor((i * WINDOW_MS) / COUNT)).toISOString(),
      });
    }
    const scheduleSeconds = (performance.now() - scheduling) / 1000;

    // A restart: a new scheduler (a new worker) reloads every pending job from the database.
    await ctx.app.deps.jobs.stop();
    const lateness: number[] = [];
    const deps = ctx.app.deps;
    const jobs: JobScheduler = new JobScheduler(deps.logger, async (job) => {
      if (job.kind !== 'message') return;
      const retryAt = await runDueMessage(deps, job.messageId);
      if (retryAt) await jobs.scheduleMessage(randomUUID(), job.messageId, retryAt);
    });
    jobs.onFired = (at, receivedAt) => lateness.push(receivedAt - at);
    deps.jobs = jobs;
    const reloading = performance.now();
    const reloaded = await resumeScheduled(deps);
    const reloadSeconds = (performance.now() - reloading) / 1000;
    if (Date.now() > start) throw new Error('scheduling took longer than the lead time; lateness would be meaningless');

    const until = start + WINDOW_MS + 120_000;
    const inboxCount = () => recipients.reduce((n, r) => n + ctx.sandbox.control.inbox(r).length, 0);
    while (inboxCount() < COUNT && Date.now() < until) await new Promise((r) => setTimeout(r, 250));
    await new Promise((r) => setTimeout(r, 1_000));
    const contents = recipients.flatMap((r) => ctx.sandbox.control.inbox(r).map((e) => e.content));
    const duplicates = recipients.reduce((n, r) => n + ctx.sandbox.control.inbox(r).reduce((m, e) => m + e.duplicates, 0), 0);
    const statuses = await ctx.app.db.outgoingMessage.groupBy({ by: ['status'], _count: { _all: true } });
    await jobs.stop();
    return {
      count: COUNT,
      scheduleSeconds,
      reloaded,
      reloadSeconds,
      p50: quantile(lateness, 0.5),
      p99: quantile(lateness, 0.99),
      delivered: new Set(contents).size,
      repeated: contents.length - new Set(contents).size + duplicates,
      statuses: Object.fromEntries(statuses.map((s) => [s.status, s._count._all])),
    };
  } finally {
    await ctx.app.close();
    await ctx.sandbox.close();
  }
};

export const printSchedulingBench = (r: Awaited<ReturnType<typeof benchScheduling>>): void => {
  console.log(
    `scheduling: ${r.count} messages into one minute (stored in ${r.scheduleSeconds.toFixed(1)} s); reload after a restart ` +
      `${r.reloaded} jobs in ${r.reloadSeconds.toFixed(2)} s (target <= 2 s); lateness p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms ` +
      `(target p99 <= 100 ms); delivered ${r.delivered}/${r.count} distinct, ${r.repeated} repeated; records ${JSON.stringify(r.statuses)}`,
  );
};
