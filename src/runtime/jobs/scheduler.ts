import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Bree from 'bree';
import type { Logger } from 'pino';
import type { Jobs, RecurringSpec } from '../ports/jobs.ts';

const TIMERS_WORKER = fileURLToPath(new URL('./workers/timers.mjs', import.meta.url));
const TIMERS_JOB = 'timers';

export type DueJob = { kind: 'message'; messageId: string } | { kind: 'recurring'; timerId: string };

interface DueMessage {
  type?: string;
  key?: string;
  job?: DueJob;
  /** when it was meant to fire (ms since the epoch), for lateness figures */
  at?: number;
}

type Command = { type: 'at'; key: string; at: number; job: DueJob } | { type: 'clear'; key: string } | { type: 'stop' };

/**
 * Bree runs one long-lived worker thread that holds every timer; its "due" messages come back here,
 * and `onDue` does the work in the main thread, which owns the sockets. A worker per job would cost a
 * thread start each time, far too slow for thousands of jobs a minute.
 * A recurring job is a chain of one-shot timers, each armed for its next due time here: it never fires
 * before that time, and after a stall (a blocked thread, a suspended machine) it fires once and
 * continues from now rather than catching up in a burst.
 */
export class JobScheduler implements Jobs {
  private readonly bree: Bree;
  private readonly recurring = new Map<string, RecurringSpec>();
  /** each recurring job's next due time (ms since the epoch) */
  private readonly nextDue = new Map<string, number>();
  private started?: Promise<Worker>;
  private stopped = false;
  /** when this scheduler (so this process's jobs) started, ms since the epoch */
  readonly startedAt: number;
  /** called with (scheduled at, received here at) for every one-shot job; benchmarks read lateness from it */
  onFired?: (at: number, receivedAt: number) => void;
  /** called for every due job, with how late a one-shot job fired (ms); metrics read it */
  onDueJob?: (kind: DueJob['kind'], lateMs?: number) => void;

  constructor(
    private readonly logger: Logger,
    private readonly onDue: (job: DueJob) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.bree = new Bree({
      root: false,
      doRootCheck: false,
      logger: false,
      jobs: [{ name: TIMERS_JOB, path: TIMERS_WORKER }],
      workerMessageHandler: ({ message: raw }) => {
        const message = raw as DueMessage | undefined;
        if (message?.type !== 'due' || !message.job) return;
        const receivedAt = Date.now();
        if (message.job.kind === 'message' && message.at !== undefined) this.onFired?.(message.at, receivedAt);
        if (message.job.kind === 'recurring' && !this.recurringDue(message.job.timerId)) return;
        this.onDueJob?.(message.job.kind, message.at !== undefined ? receivedAt - message.at : undefined);
        this.onDue(message.job).catch((err: unknown) => this.logger.error({ err, job: message.key }, 'due job failed'));
      },
      errorHandler: (err: unknown) => {
        this.logger.error({ err }, 'the timer worker failed');
      },
    });
  }

  private worker(): Promise<Worker> {
    this.started ??= (async () => {
      await this.bree.run(TIMERS_JOB);
      const worker = this.bree.workers.get(TIMERS_JOB) as Worker | undefined;
      if (!worker) throw new Error('the timer worker did not start');
      return worker;
    })();
    return this.started;
  }

  private async send(command: Command): Promise<void> {
    if (this.stopped) return;
    (await this.worker()).postMessage(command);
  }

  /** One-shot: at `at`, or at once when `at` has passed. */
  async scheduleMessage(jobId: string, messageId: string, at: Date): Promise<void> {
    await this.send({ type: 'at', key: jobId, at: at.getTime(), job: { kind: 'message', messageId } });
  }

  async addRecurring(spec: RecurringSpec): Promise<void> {
    this.recurring.set(spec.timerId, spec);
    this.nextDue.set(spec.timerId, spec.createdAt.getTime() + spec.everyMs);
    await this.armRecurring(spec.timerId);
  }

  private async armRecurring(timerId: string): Promise<void> {
    const at = this.nextDue.get(timerId);
    if (at === undefined) return;
    await this.send({ type: 'at', key: timerId, at, job: { kind: 'recurring', timerId } });
  }

  /** Whether a recurring job's timer fired at its time; the next one is armed either way. */
  private recurringDue(timerId: string): boolean {
    const spec = this.recurring.get(timerId);
    const at = this.nextDue.get(timerId);
    if (!spec || at === undefined) return false;
    const now = this.now();
    const due = now >= at;
    if (due) this.nextDue.set(timerId, at + spec.everyMs > now ? at + spec.everyMs : now + spec.everyMs);
    this.armRecurring(timerId).catch((err: unknown) => this.logger.error({ err, timerId }, 'arming a recurring job failed'));
    return due;
  }

  recurringSpec(timerId: string): RecurringSpec | undefined {
    return this.recurring.get(timerId);
  }

  listRecurring(sessionId: string): RecurringSpec[] {
    return [...this.recurring.values()].filter((r) => r.sessionId === sessionId);
  }

  countRecurring(accountId: string): number {
    let count = 0;
    for (const spec of this.recurring.values()) if (spec.accountId === accountId) count += 1;
    return count;
  }

  async cancelRecurring(timerId: string): Promise<boolean> {
    if (!this.recurring.delete(timerId)) return false;
    this.nextDue.delete(timerId);
    await this.send({ type: 'clear', key: timerId });
    return true;
  }

  /** Recurring jobs of a deleted session go with it. */
  async cancelSession(sessionId: string): Promise<void> {
    await Promise.all(this.listRecurring(sessionId).map((r) => this.cancelRecurring(r.timerId)));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.recurring.clear();
    this.nextDue.clear();
    if (this.started) {
      const worker = await this.started.catch(() => undefined);
      worker?.postMessage({ type: 'stop' } satisfies Command);
    }
    this.stopped = true;
    await this.bree.stop();
  }
}
