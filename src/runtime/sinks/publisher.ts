import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Prisma } from '../../generated/sqlite/client.ts';
import type { Db, RawWrites } from '../ports/db.ts';
import type { EventSinks } from '../ports/sinks.ts';
import type { WebhookOutbox } from '../ports/webhooks.ts';
import { jsonRows } from '../db/json-rows.ts';
import { rawRows, rawWrites } from '../db/raw-writes.ts';
import type { Provider } from '../db/migrate.ts';
import { payloadOf } from '../webhooks/attempt.ts';
import type { BrokerClient, SinkMessage, SinkTarget } from './brokers.ts';
import { brokerClient } from './brokers.ts';

export interface SinkMetrics {
  published: (sinkId: string, n: number) => void;
  retried: (sinkId: string, n: number) => void;
  failed: (sinkId: string, n: number) => void;
  /** seconds between now and the creation of the oldest event waiting for the sink (0: none waits) */
  lag: (sinkId: string, seconds: number) => void;
  /** the sink is no longer published from here */
  forget: (sinkId: string) => void;
}

export interface SinkPublisherOptions {
  db: Db;
  logger: Logger;
  provider: Provider;
  outbox: WebhookOutbox;
  now: () => Date;
  /** how often the sinks are looked for (leases taken and renewed), and other nodes' events */
  pollMs: number;
  /** a node that stops renewing loses its sinks after this long */
  leaseMs: number;
  /** first retry delay after a failed publish; each later one doubles, up to retryMaxMs */
  retryBaseMs: number;
  retryMaxMs: number;
  /** events published per round at most (pipelined: sent together, then their confirms awaited) */
  batch: number;
  metrics?: SinkMetrics;
  /** for tests: how a sink's broker client is made */
  clientFor?: (sink: SinkTarget, onError: (message: string) => void) => BrokerClient;
}

interface PendingRow {
  id: string;
  eventId: string;
  accountId: string;
  sessionId: string | null;
  type: string;
  data: string;
  createdAt: Date | string;
}

type LeasedRow = SinkTarget & { enabled: boolean | number | bigint };

/** a failure is written to the sink's row at most this often, so a broker down for long is not a write per retry */
const STATUS_WRITE_EVERY_MS = 1_000;

const sameTarget = (a: SinkTarget, b: SinkTarget): boolean =>
  a.kind === b.kind && a.url === b.url && a.exchange === b.exchange && a.stream === b.stream && a.subjectPrefix === b.subjectPrefix;

/**
 * Publishes one sink's outbox, oldest event first: a round reads the next events, sends them through the
 * broker client (pipelined), and deletes those the broker confirmed, from the first on. A refusal or a
 * dropped connection stops the round at that event: the sink's events wait, in order, and the round is
 * tried again after a back-off. Everything after the first refusal is sent again (same event ids).
 */
class SinkWorker {
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private failures = 0;
  private checked = false;
  private lastStatusWrite = 0;
  private lastPublishedWrite = 0;
  /**
   * The last event confirmed here: the next round reads after it while the confirmed ones are deleted
   * behind (off the path of the next publish). A round that finds nothing after it reads from the head
   * again, once those deletes are done, so an event whose transaction committed late is still sent.
   */
  private after: string | null = null;
  private deleting: Promise<void> = Promise.resolve();
  readonly running: Promise<void>;
  private readonly client: BrokerClient;

  constructor(
    readonly target: SinkTarget,
    private readonly owner: SinkPublisher,
  ) {
    this.client = (owner.options.clientFor ?? brokerClient)(target, (message) =>
      owner.options.logger.debug({ sinkId: target.id, error: message }, 'sink broker connection error'),
    );
    this.running = this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    await this.deleting;
    await this.client.close();
  }

  /** Waits for new events (wake), or the poll for other nodes' events. */
  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) {
      this.woken = false;
      return Promise.resolve();
    }
    return this.wait(ms, true);
  }

  /** A back-off: only stop() ends it early, not new events. */
  private pause(ms: number): Promise<void> {
    return this.stopped ? Promise.resolve() : this.wait(ms, false);
  }

  private wait(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        this.woken = false;
        resolve();
      };
      timer = setTimeout(finish, ms);
      this.wakeUp = wakeable ? finish : () => (this.stopped ? finish() : undefined);
    });
  }

  private async run(): Promise<void> {
    const { options } = this.owner;
    while (!this.stopped) {
      try {
        if (!this.checked) {
          await this.client.check();
          this.checked = true;
        }
        // After a failure the head goes alone until the broker takes it: a batch could be refused at its
        // head and taken further on (a full queue being drained meanwhile), which would put later events first.
        const rows = await this.owner.next(this.target.id, this.failures > 0 ? 1 : options.batch, this.after);
        if (rows.length === 0 && this.after !== null) {
          await this.deleting;
          this.after = null;
          continue;
        }
        if (rows.length === 0) {
          options.metrics?.lag(this.target.id, 0);
          await this.sleep(options.pollMs);
          continue;
        }
        options.metrics?.lag(this.target.id, Math.max(0, (options.now().getTime() - new Date(rows[0].createdAt).getTime()) / 1000));
        const messages: SinkMessage[] = rows.map((r) => {
          const createdAt = new Date(r.createdAt);
          return {
            eventId: r.eventId,
            accountId: r.accountId,
            sessionId: r.sessionId,
            type: r.type,
            createdAt,
            body: payloadOf({ type: r.type, data: r.data, createdAt }),
          };
        });
        if (this.failures > 0) options.metrics?.retried(this.target.id, messages.length);
        const outcomes = await this.client.publish(messages);
        const firstFailure = outcomes.findIndex((e) => e !== null);
        const confirmed = firstFailure === -1 ? rows.length : firstFailure;
        if (confirmed > 0) {
          const ids = rows.slice(0, confirmed).map((r) => r.id);
          this.after = rows[confirmed - 1].eventId;
          // a failed delete leaves the events to be sent again (same ids) when the head is read next
          this.deleting = this.deleting.then(() =>
            this.owner.done(ids).catch((err: unknown) => {
              this.after = null;
              options.logger.warn({ err, sinkId: this.target.id }, 'deleting published sink events failed; they are published again');
            }),
          );
          options.metrics?.published(this.target.id, confirmed);
        }
        if (firstFailure === -1) {
          await this.succeeded();
          continue;
        }
        options.metrics?.failed(this.target.id, rows.length - confirmed);
        await this.failed(outcomes[firstFailure] ?? new Error('refused'));
      } catch (err) {
        if (this.stopped) return;
        this.after = null;
        await this.failed(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  private async succeeded(): Promise<void> {
    const now = this.owner.options.now();
    const wasFailing = this.failures > 0;
    this.failures = 0;
    if (wasFailing || now.getTime() - this.lastPublishedWrite >= STATUS_WRITE_EVERY_MS) {
      this.lastPublishedWrite = now.getTime();
      await this.owner.options.db
        .$executeRaw`UPDATE "EventSink" SET "lastPublishedAt" = ${now}, "failingSince" = NULL WHERE "id" = ${this.target.id}`;
    }
  }

  private async failed(err: Error): Promise<void> {
    const { options } = this.owner;
    this.failures += 1;
    this.checked = this.checked && this.failures < 2;
    const now = options.now();
    if (this.failures === 1 || now.getTime() - this.lastStatusWrite >= STATUS_WRITE_EVERY_MS) {
      this.lastStatusWrite = now.getTime();
      if (this.failures === 1)
        options.logger.warn({ sinkId: this.target.id, kind: this.target.kind, error: err.message }, 'event sink failing; retrying');
      await options.db.$executeRaw`UPDATE "EventSink" SET "lastError" = ${err.message}, "lastErrorAt" = ${now},
        "failingSince" = COALESCE("failingSince", ${now}) WHERE "id" = ${this.target.id}`.catch((e: unknown) =>
        options.logger.warn({ err: e, sinkId: this.target.id }, 'recording a sink failure failed'),
      );
    }
    const delay = Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** Math.min(this.failures - 1, 20));
    await this.pause(delay * (0.75 + Math.random() * 0.5));
  }
}

/**
 * This node's publisher of event sinks. A sink is published by one node at a time: the node that holds
 * its lease (leaseOwner, leaseUntil on the sink's row), taken and renewed by one conditional UPDATE
 * that two nodes can run at once. A node that dies leaves its lease to run out; the next holder starts
 * from the sink's oldest unconfirmed event, so what the dead node sent without deleting goes again
 * with the same ids.
 */
export class SinkPublisher implements EventSinks {
  private readonly workers = new Map<string, SinkWorker>();
  /** this node's name in the leases it holds */
  readonly nodeId = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly ids: (values: string[]) => Prisma.Sql;
  /** the outbox's reads and deletes, the hot path of every event: on SQLite off Prisma's own work per row */
  private readonly rows: <T>(sql: Prisma.Sql) => Promise<T[]>;
  private readonly writes: RawWrites;

  constructor(readonly options: SinkPublisherOptions) {
    this.rows = rawRows(options.db);
    this.writes = rawWrites(options.db);
    const table = jsonRows(options.provider, [['value', 'text']]);
    this.ids = (values) => Prisma.sql`SELECT "value" FROM (${table(values.map((v) => [v]))}) AS t`;
    options.outbox.onSinkRows((sinkIds) => {
      for (const id of sinkIds) this.workers.get(id)?.wake();
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.changed();
  }

  changed(): void {
    if (this.stopped) return;
    if (this.refreshing) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.refreshing = this.refresh()
      .catch((err: unknown) => this.options.logger.error({ err }, 'taking event sink leases failed'))
      .finally(() => {
        this.refreshing = null;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.changed();
          return;
        }
        this.timer = setTimeout(() => this.changed(), Math.min(this.options.pollMs * 5, this.options.leaseMs / 3));
        this.timer.unref();
      });
  }

  /** Takes the free sinks and renews those held here; starts, restarts or stops their workers to match. */
  private async refresh(): Promise<void> {
    const now = this.options.now();
    const until = new Date(now.getTime() + this.options.leaseMs);
    const held = await this.options.db.$queryRaw<LeasedRow[]>`UPDATE "EventSink" SET "leaseOwner" = ${this.nodeId}, "leaseUntil" = ${until}
      WHERE "leaseOwner" = ${this.nodeId} OR "leaseUntil" IS NULL OR "leaseUntil" < ${now}
      RETURNING "id", "kind", "url", "exchange", "stream", "subjectPrefix", "enabled"`;
    if (this.stopped) {
      await this.release();
      return;
    }
    const active = new Map(held.filter((s) => Boolean(s.enabled)).map((s) => [s.id, s]));
    const stopping: Array<Promise<void>> = [];
    for (const [id, worker] of this.workers) {
      const now = active.get(id);
      if (now && sameTarget(now, worker.target)) continue;
      this.workers.delete(id);
      if (!now) this.options.metrics?.forget(id);
      stopping.push(worker.stop());
    }
    await Promise.all(stopping);
    for (const [id, row] of active) {
      if (this.workers.has(id)) continue;
      const target: SinkTarget = {
        id: row.id,
        kind: row.kind,
        url: row.url,
        exchange: row.exchange,
        stream: row.stream,
        subjectPrefix: row.subjectPrefix,
      };
      this.workers.set(id, new SinkWorker(target, this));
    }
  }

  /** The next events of a sink, oldest first. */
  async next(sinkId: string, limit: number, after: string | null): Promise<PendingRow[]> {
    const from = after === null ? Prisma.empty : Prisma.sql`AND "eventId" > ${after}`;
    return this.rows<PendingRow>(Prisma.sql`SELECT "id", "eventId", "accountId", "sessionId", "type", "data", "createdAt"
      FROM "SinkDelivery" WHERE "sinkId" = ${sinkId} ${from} ORDER BY "eventId" LIMIT ${limit}`);
  }

  /** Events the broker confirmed leave the outbox. */
  async done(ids: string[]): Promise<void> {
    await this.writes([Prisma.sql`DELETE FROM "SinkDelivery" WHERE "id" IN (${this.ids(ids)})`]);
  }

  private async release(): Promise<void> {
    await this.options.db.$executeRaw`UPDATE "EventSink" SET "leaseOwner" = NULL, "leaseUntil" = NULL WHERE "leaseOwner" = ${this.nodeId}`;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.refreshing;
    const workers = [...this.workers.values()];
    this.workers.clear();
    await Promise.all(workers.map((w) => w.stop()));
    await this.release().catch((err: unknown) =>
      this.options.logger.warn({ err }, 'releasing event sink leases failed; other nodes take them when they run out'),
    );
  }
}
