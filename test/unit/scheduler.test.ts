import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { JobScheduler } from '../../src/runtime/jobs/scheduler.ts';
import type { DueJob } from '../../src/runtime/jobs/scheduler.ts';

const waitFor = async (check: () => boolean, ms = 10_000) => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('job scheduler (Bree worker threads)', () => {
  let scheduler: JobScheduler | undefined;
  afterEach(async () => {
    await scheduler?.stop();
  });

  it('announces a one-shot job at its time, and a past one at once', async () => {
    const due: Array<{ job: DueJob; at: number }> = [];
    scheduler = new JobScheduler(pino({ level: 'silent' }), async (job) => {
      due.push({ job, at: Date.now() });
    });
    const start = Date.now();
    await scheduler.scheduleMessage('later', 'm-later', new Date(start + 600));
    await scheduler.scheduleMessage('past', 'm-past', new Date(start - 60_000));
    await waitFor(() => due.length === 2);
    expect(due.map((d) => d.job)).toEqual([
      { kind: 'message', messageId: 'm-past' },
      { kind: 'message', messageId: 'm-later' },
    ]);
    expect((due[1]?.at ?? 0) - start).toBeGreaterThanOrEqual(550);
  });

  it('fires a recurring job repeatedly until it is cancelled', async () => {
    const fired: string[] = [];
    scheduler = new JobScheduler(pino({ level: 'silent' }), async (job) => {
      if (job.kind === 'recurring') fired.push(job.timerId);
    });
    await scheduler.addRecurring({ timerId: 't1', accountId: 'a', sessionId: 's', everyMs: 150, payload: {}, createdAt: new Date() });
    expect(scheduler.listRecurring('s').map((r) => r.timerId)).toEqual(['t1']);
    await waitFor(() => fired.length >= 3);
    expect(await scheduler.cancelRecurring('t1')).toBe(true);
    const count = fired.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(fired.length).toBeLessThanOrEqual(count + 1);
    expect(scheduler.listRecurring('s')).toEqual([]);
    expect(await scheduler.cancelRecurring('t1')).toBe(false);
  });
});
