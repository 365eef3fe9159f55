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

  it('announces a recurring job when armed, moves it when armed again, and forgets it when disarmed', async () => {
    const fired: string[] = [];
    scheduler = new JobScheduler(pino({ level: 'silent' }), async (job) => {
      if (job.kind === 'recurring') fired.push(job.timerId);
    });
    const start = Date.now();
    await scheduler.armRecurring('t1', 's', new Date(start + 60_000));
    await scheduler.armRecurring('t1', 's', new Date(start - 1));
    await scheduler.armRecurring('t2', 's', new Date(start + 400));
    await scheduler.armRecurring('t3', 'other', new Date(start + 400));
    await waitFor(() => fired.length === 1);
    expect(fired).toEqual(['t1']);
    await scheduler.disarmSession('s');
    await scheduler.disarmRecurring('t3');
    // Had t2 or t3 survived the clears, they would fire before this marker.
    await scheduler.armRecurring('marker', 'x', new Date(start + 800));
    await waitFor(() => fired.length === 2);
    expect(fired).toEqual(['t1', 'marker']);
  });
  it('forgets the one-shot jobs of the records it is told to disarm, and only theirs', async () => {
    const fired: string[] = [];
    scheduler = new JobScheduler(pino({ level: 'silent' }), async (job) => {
      if (job.kind === 'message') fired.push(job.messageId);
    });
    const start = Date.now();
    await scheduler.scheduleMessage('a', 'moved', new Date(start + 400));
    await scheduler.scheduleMessage('b', 'moved', new Date(start + 500));
    await scheduler.scheduleMessage('c', 'kept', new Date(start + 400));
    await scheduler.disarmMessages(['moved']);
    // Had a job of "moved" survived, it would fire before this marker.
    await scheduler.scheduleMessage('d', 'marker', new Date(start + 900));
    await waitFor(() => fired.length === 2);
    expect(fired).toEqual(['kept', 'marker']);
  });
});
