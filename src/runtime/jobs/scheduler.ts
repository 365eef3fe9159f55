import { fileURLToPath } from 'node:url';
import Bree from 'bree';
import type { Logger } from 'pino';

const DUE_WORKER = fileURLToPath(new URL('./workers/due.mjs', import.meta.url));

export type DueJob = { kind: 'message'; messageId: string } | { kind: 'recurring'; timerId: string };

export interface RecurringSpec {
  timerId: string;
  accountId: string;
  sessionId: string;
  everyMs: number;
  /** what to send each time, as the resolver that created it understands it */
  payload: Record<string, unknown>;
  createdAt: Date;
}

interface DueMessage {
  type?: string;
  job?: DueJob | null;
}

/**
 * Bree runs each one-shot and recurring job in a worker thread at its time; the worker's message
 * comes back here and `onDue` does the work in the main thread.
 */
export class JobScheduler {
  private readonly bree: Bree;
  private readonly recurring = new Map<string, RecurringSpec>();
  private readonly onceJobs = new Set<string>();
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    private readonly onDue: (job: DueJob) => Promise<void>,
  ) {
    this.bree = new Bree({
      root: false,
      doRootCheck: false,
      jobs: [],
      logger: false,
      removeCompleted: true,
      workerMessageHandler: ({ name, message: raw }) => {
        const message = raw as DueMessage | undefined;
        if (message?.type !== 'due' || !message.job) return;
        if (message.job.kind === 'message') this.onceJobs.delete(name);
        this.onDue(message.job).catch((err: unknown) => this.logger.error({ err, job: name }, 'due job failed'));
      },
      errorHandler: (err: unknown, meta: { name?: string }) => {
        this.logger.error({ err, job: meta?.name }, 'job worker failed');
      },
    });
  }

  /** One-shot: at `at`, or at once when `at` has passed. */
  async scheduleMessage(jobId: string, messageId: string, at: Date): Promise<void> {
    if (this.stopped) return;
    const job: DueJob = { kind: 'message', messageId };
    this.onceJobs.add(jobId);
    const inFuture = at.getTime() > Date.now() + 50;
    await this.bree.add({ name: jobId, path: DUE_WORKER, ...(inFuture ? { date: at } : {}), worker: { workerData: { job } } });
    if (inFuture) await this.bree.start(jobId);
    else await this.bree.run(jobId);
  }

  async addRecurring(spec: RecurringSpec): Promise<void> {
    const job: DueJob = { kind: 'recurring', timerId: spec.timerId };
    this.recurring.set(spec.timerId, spec);
    await this.bree.add({ name: spec.timerId, path: DUE_WORKER, interval: spec.everyMs, worker: { workerData: { job } } });
    await this.bree.start(spec.timerId);
  }

  recurringSpec(timerId: string): RecurringSpec | undefined {
    return this.recurring.get(timerId);
  }

  listRecurring(sessionId: string): RecurringSpec[] {
    return [...this.recurring.values()].filter((r) => r.sessionId === sessionId);
  }

  async cancelRecurring(timerId: string): Promise<boolean> {
    if (!this.recurring.delete(timerId)) return false;
    await this.bree.remove(timerId).catch((err: unknown) => this.logger.warn({ err, timerId }, 'removing the job failed'));
    return true;
  }

  /** Recurring jobs of a deleted session go with it. */
  async cancelSession(sessionId: string): Promise<void> {
    await Promise.all(this.listRecurring(sessionId).map((r) => this.cancelRecurring(r.timerId)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.recurring.clear();
    await this.bree.stop();
  }
}
