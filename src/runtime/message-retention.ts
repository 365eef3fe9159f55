import type { Logger } from 'pino';
import type { MessageRetentionJob } from './ports/incoming.ts';

const PURGE_EVERY_MS = 3_600_000;

/**
 * Runs the deletion of stored messages past their account's retention (resolvers/retention.ts, passed in
 * by the composition root), hourly and once shortly after start; a run still going when the next is due
 * is not doubled.
 */
export class MessageRetention implements MessageRetentionJob {
  private timer: NodeJS.Timeout | null = null;
  private first: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly options: { purge: () => Promise<number>; logger: Logger; everyMs?: number }) {}

  purge(): Promise<number> {
    this.running ??= this.options.purge().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  start(): void {
    if (this.timer) return;
    const run = () => {
      this.purge().catch((err: unknown) => this.options.logger.warn({ err }, 'deleting stored messages past their retention failed'));
    };
    this.first = setTimeout(run, 60_000);
    this.first.unref();
    this.timer = setInterval(run, this.options.everyMs ?? PURGE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.first) clearTimeout(this.first);
    if (this.timer) clearInterval(this.timer);
    this.first = null;
    this.timer = null;
  }
}
