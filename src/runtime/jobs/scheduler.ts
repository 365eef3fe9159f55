import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Bree from 'bree';
import type { Logger } from 'pino';

const TIMERS_WORKER = fileURLToPath(new URL('./workers/timers.mjs', import.meta.url));
const TIMERS_JOB = 'timers';

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
  key?: string;
  job?: DueJob;
  /** when it was meant to fire (ms since the epoch), for lateness figures */
  at?: number;
}

type Command =
  | { type: 'at'; key: string; at: number; job: DueJob }
  | { type: 'every'; key: string; everyMs: number; job: DueJob }
  | { type: 'clear'; key: string }
  | { type: 'stop' };

/**
 * Bree runs one long-lived worker thread that holds every timer (one-shot and recurring); its "due"
 * messages come back here, and `onDue` does the work in the main thread, which owns the sockets.
 * A worker per job would cost a thread start each time, far too slow for thousands of jobs a minute.
 */
export class JobScheduler {
  private readonly bree: Bree;
  private readonly recurring = new Map<string, RecurringSpec>();
  private started?: Promise<Worker>;
  private stopped = false;
  /** called with (scheduled at, received here at) for every one-shot job; benchmarks read lateness from it */
  onFired?: (at: number, receivedAt: number) => void;
  /** called for every due job, with how late a one-shot job fired (ms); metrics read it */
  onDueJob?: (kind: DueJob['kind'], lateMs?: number) => void;

  constructor(
    private readonly logger: Logger,
    private readonly onDue: (job: DueJob) => Promise<void>,
  ) {
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
    await this.send({ type: 'every', key: spec.timerId, everyMs: spec.everyMs, job: { kind: 'recurring', timerId: spec.timerId } });
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
    if (this.started) {
      const worker = await this.started.catch(() => undefined);
      worker?.postMessage({ type: 'stop' } satisfies Command);
    }
    this.stopped = true;
    await this.bree.stop();
  }
}
