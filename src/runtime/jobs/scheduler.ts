import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Bree from 'bree';
import type { Logger } from 'pino';
import type { Jobs } from '../ports/jobs.ts';

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
 * A recurring timer is a chain of one-shot timers: `onDue` claims the occurrence in the database and
 * arms the next one (resolvers/recurring.ts), so the row, not this process, holds the schedule.
 */
export class JobScheduler implements Jobs {
  private readonly bree: Bree;
  /** the recurring timers armed here, with their session */
  private readonly armed = new Map<string, string>();
  /** the one-shot jobs armed here, by key, with their record */
  private readonly messages = new Map<string, string>();
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
        if (message.job.kind === 'recurring') this.armed.delete(message.job.timerId);
        else if (message.key !== undefined) this.messages.delete(message.key);
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
    this.messages.set(jobId, messageId);
    await this.send({ type: 'at', key: jobId, at: at.getTime(), job: { kind: 'message', messageId } });
  }

  async armRecurring(timerId: string, sessionId: string, at: Date): Promise<void> {
    this.armed.set(timerId, sessionId);
    await this.send({ type: 'at', key: timerId, at: at.getTime(), job: { kind: 'recurring', timerId } });
  }

  async disarmRecurring(timerId: string): Promise<void> {
    if (!this.armed.delete(timerId)) return;
    await this.send({ type: 'clear', key: timerId });
  }

  async disarmSession(sessionId: string): Promise<void> {
    const timers = [...this.armed].filter(([, of]) => of === sessionId).map(([timerId]) => timerId);
    await Promise.all(timers.map((timerId) => this.disarmRecurring(timerId)));
  }

  async disarmMessages(messageIds: readonly string[]): Promise<void> {
    const ids = new Set(messageIds);
    const keys = [...this.messages].filter(([, messageId]) => ids.has(messageId)).map(([key]) => key);
    for (const key of keys) this.messages.delete(key);
    await Promise.all(keys.map((key) => this.send({ type: 'clear', key })));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.armed.clear();
    this.messages.clear();
    if (this.started) {
      const worker = await this.started.catch(() => undefined);
      worker?.postMessage({ type: 'stop' } satisfies Command);
    }
    this.stopped = true;
    await this.bree.stop();
  }
}
