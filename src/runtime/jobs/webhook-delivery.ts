import type { Logger } from 'pino';
import { Agent } from 'undici';
import { Prisma } from '../../generated/sqlite/client.ts';
import type { WebhookEndpoint } from '../../generated/sqlite/client.ts';
import type { Db } from '../ports/db.ts';
import type { UrlRules } from '../ports/media.ts';
import type { OutboxRows, WebhookDelivery, WebhookOutbox } from '../ports/webhooks.ts';
import { groupCommit } from '../db/group-commit.ts';
import type { GroupCommit } from '../db/group-commit.ts';
import { jsonRows, notIndexed } from '../db/json-rows.ts';
import { rawWrites } from '../db/raw-writes.ts';
import type { Provider } from '../db/migrate.ts';
import { providerOf } from '../db/migrate.ts';
import { guardedLookup } from '../media-fetch.ts';
import type { Answer } from '../webhooks/attempt.ts';
import { failureOf, isSuccess, payloadOf, post, signerOf } from '../webhooks/attempt.ts';
import type { Signer } from '../webhooks/attempt.ts';
import { EndpointFailureLog } from '../webhooks/failure-log.ts';
import { newSortableId } from '../webhooks/outbox.ts';

export interface WebhookDeliveryOptions {
  db: Db;
  logger: Logger;
  outbox: WebhookOutbox;
  databaseUrl: string;
  now: () => Date;
  /** requests in flight at most, across all endpoints */
  concurrency: number;
  timeoutMs: number;
  /** first retry delay; each later one doubles, with jitter, up to maxDelayMs */
  retryBaseMs: number;
  retryMaxMs: number;
  /** an event is retried for this long; an endpoint failing this long is disabled */
  retryForMs: number;
  allowPrivate: boolean;
  /** the domain's rule and errors for the URL of an endpoint */
  urlRules: UrlRules;
  resolveHost?: (host: string) => Promise<string[]>;
  /** how often due retries and other nodes' events are looked for when nothing wakes the loop */
  pollMs?: number;
  /** finished deliveries and their attempts are deleted this long after the event */
  retentionMs: number;
  /** told of every attempt, for the metrics */
  onAttempt?: (outcome: 'delivered' | 'failed', seconds: number) => void;
  /** a failing endpoint is logged at its first failure, then at most once per this while it fails (default 5 minutes) */
  failureWarnEveryMs?: number;
}

const FAILURE_WARN_EVERY_MS = 5 * 60 * 1000;

const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** the shortest time between two claims of a few deliveries each (the longest a delivery waits for this) */
const COALESCE_MS = 5;
/**
 * How long an outcome waits for others to share its write. A success's is written behind (its delivery
 * stays leased meanwhile), so this delays no delivery; a failure's retry is seconds away anyway.
 */
const OUTCOME_DELAY_MS = 5;
/** a claim takes up to this many times the concurrency, less what is held (pairs at MAX_HELD_PER_KEY aside) */
const CLAIM_BACKLOG = 4;
/**
 * Deliveries written here are taken straight into memory while fewer than this many times the
 * concurrency are held (and fewer than MAX_HELD_PER_KEY of their endpoint and session). A delivery
 * declined is read back by a claim, which costs its statement and its rows again.
 */
const HANDOFF_BACKLOG = 16;
/**
 * Deliveries of one endpoint and session held in memory (queued or in flight) beyond which claims skip that
 * pair and the handoff declines it: a slow receiver's backlog waits in the database, and the places and
 * claims go to everyone else's deliveries.
 */
const MAX_HELD_PER_KEY = 16;
/** deliveries written here unclaimed that the loop tracks by id at most; beyond, it claims until a claim finds no more */
const MAX_UNCLAIMED = 10_000;
/** how long an endpoint read for an attempt is trusted for the next ones (changes made on this node apply at once) */
const ENDPOINT_CACHE_MS = 1_000;

/** Deliveries of one endpoint and session go out one at a time, in order: the key of their queue. */
const keyOf = (d: { endpointId: string; sessionId: string | null }): string => `${d.endpointId}|${d.sessionId ?? ''}`;

interface Claimed {
  id: string;
  eventId: string;
  endpointId: string;
  sessionId: string | null;
  attempts: number;
  createdAt: Date;
  event: EventOfAttempt;
  /** read with the rest of its claim, so an attempt starts without a query of its own */
  endpoint?: EndpointOfAttempt | null;
}

interface EventOfAttempt {
  id: string;
  type: string;
  /** the JSON of the payload's data */
  data: string;
  createdAt: Date;
}
type EndpointOfAttempt = Pick<
  WebhookEndpoint,
  'id' | 'accountId' | 'url' | 'secret' | 'previousSecret' | 'previousSecretUntil' | 'enabled' | 'failingSince'
>;

/** A claimed delivery as the claim statement returns it. */
interface ClaimRow {
  id: string;
  eventId: string;
  type: string;
  data: string;
  endpointId: string;
  sessionId: string | null;
  attempts: number | bigint;
  createdAt: Date | string;
}

const ENDPOINT_OF_ATTEMPT = {
  id: true,
  accountId: true,
  url: true,
  secret: true,
  previousSecret: true,
  previousSecretUntil: true,
  enabled: true,
  failingSince: true,
} as const;

interface AttemptRow {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
  at: Date;
}

/** A success is recorded on its delivery, a failure as a log row and the delivery's next step. */
type Outcome =
  | {
      delivered: { id: string; attempts: number; lastStatus: number; latencyMs: number; excerpt: string | null; at: Date };
      followUps: Array<Prisma.PrismaPromise<unknown>>;
    }
  | { failed: AttemptRow; followUps: Array<Prisma.PrismaPromise<unknown>> };

/** A list of texts (ids, keys) as a one-column table of one JSON parameter, for `IN (...)`. */
const textList = (provider: Provider): ((values: string[]) => Prisma.Sql) => {
  const table = jsonRows(provider, [['value', 'text']]);
  return (values) => Prisma.sql`SELECT "value" FROM (${table(values.map((v) => [v]))}) AS t`;
};

/** Extends the leases of deliveries held here, by id; one whose outcome is already recorded is left alone. */
export const leaseRenewal = (provider: Provider): ((ids: string[], until: Date) => Prisma.Sql) => {
  const ids = textList(provider);
  // by id, not through the (status, nextAttemptAt) index, which holds a dead endpoint's whole backlog
  const status = notIndexed(provider, '"status"');
  return (held, until) => Prisma.sql`UPDATE "WebhookDelivery" SET "claimedUntil" = ${until}
    WHERE "id" IN (${ids(held)}) AND ${status} = 'PENDING' AND "claimedUntil" IS NOT NULL`;
};

/**
 * The outbox's delivery loop. Claims due deliveries with one statement that two processes can run at
 * once, sends them signed per Standard Webhooks, and records every attempt. Deliveries of one endpoint
 * and session go out one at a time in the order they were written, so a healthy receiver sees them in
 * order; one that fails is retried later and does not hold back those behind it.
 */
export class WebhookDeliveryLoop implements WebhookDelivery {
  private readonly queues = new Map<string, Claimed[]>();
  private outstanding = 0;
  private timer: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  /**
   * Set when a claim found fewer due deliveries than it had room for: until something may have become due
   * (a write here, the poll for other nodes' writes, a retry's time), finished attempts do not claim again.
   */
  private exhausted = false;
  /** set by look(): a claim runs even if `exhausted` */
  private looking = false;
  /** the claim running began with nothing written here known to wait in the database: the handoff may take meanwhile */
  private lookOnly = false;
  private readonly signers = new Map<string, Signer>();
  /** successes whose record is still being written */
  private unrecorded = 0;
  /** counts the moments something may have become due, so a claim that overlapped one does not set `exhausted` */
  private dueSignals = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /**
   * Claims for fewer than a quarter of the places' worth of deliveries written here (`known`) come at
   * most every COALESCE_MS, so events written one by one under load are claimed together; `urgent` (the
   * start, the poll, a retry's time, a replay) claims at the next chance.
   */
  private known = 0;
  private lastClaimAt = Number.NEGATIVE_INFINITY;
  private urgent = true;
  private coalesceTimer: NodeJS.Timeout | null = null;
  private retryTimerAt = 0;
  /**
   * Until start() and after stop(): a loop that never started claims nothing, even when an attempt made
   * through it (the tests', a one-off) set a retry's timer.
   */
  private stopped = true;
  private readonly workers = new Set<Promise<void>>();
  private readonly postgres: boolean;
  private readonly texts: (values: string[]) => Prisma.Sql;
  private readonly renewal: ReturnType<typeof leaseRenewal>;
  /** the outcome of each attempt (its log row, then the delivery and the endpoint), written together with others of the same moment */
  private readonly outcomes: GroupCommit<Outcome>;
  /**
   * Keeps connections to receivers open between deliveries. Each new connection resolves the host once
   * and connects to the addresses it checked, so a name cannot pass the check and then point inside.
   */
  private agent: Agent | null = null;
  /** requests in flight, and the attempts waiting for a place */
  private active = 0;
  private readonly places: Array<() => void> = [];
  /** deliveries in the queues or in flight, so a claim after an expired lease does not queue one twice */
  private readonly held = new Set<string>();
  /** deliveries held per endpoint and session, and how many of all held are of pairs at MAX_HELD_PER_KEY or more */
  private readonly heldPerKey = new Map<string, number>();
  private saturatedHeld = 0;
  /** pairs a claim skipped for being full: once one has room again, a claim looks for its deliveries */
  private readonly skipped = new Set<string>();
  private renewer: NodeJS.Timeout | null = null;
  /** SQLite at start: the leases left by this process's predecessor being released (no claim meanwhile) */
  private releasing: Promise<void> | null = null;
  /**
   * Deliveries written here that the handoff did not take, by id, with when they were noted: while any is
   * left, the handoff takes nothing (what it took would go out before them). A claim returns them once
   * they are committed; one that finds fewer rows than it had room for forgets those noted before it
   * began (not committed then, their commit notes them again; or rolled back).
   */
  private readonly unclaimed = new Map<string, number>();
  private readonly endpoints = new Map<string, { at: number; endpoint: EndpointOfAttempt | null; accountId: string }>();
  private readonly failures: EndpointFailureLog;

  constructor(readonly options: WebhookDeliveryOptions) {
    this.failures = new EndpointFailureLog(options.logger, options.failureWarnEveryMs ?? FAILURE_WARN_EVERY_MS);
    // No transaction: Prisma's costs more CPU than a second commit, and none is needed. A failure's log row
    // goes first; a crash before the delivery's update leaves it claimed, so it is sent again when its
    // lease ends (at least once), with one log row too many at worst.
    const provider = providerOf(options.databaseUrl);
    this.postgres = provider === 'postgres';
    this.texts = textList(provider);
    this.renewal = leaseRenewal(provider);
    const attemptTable = jsonRows(provider, [
      ['id', 'text'],
      ['deliveryId', 'text'],
      ['endpointId', 'text'],
      ['eventId', 'text'],
      ['statusCode', 'integer'],
      ['latencyMs', 'integer'],
      ['responseExcerpt', 'text'],
      ['error', 'text'],
      ['at', 'timestamp'],
    ]);
    const deliveredTable = jsonRows(provider, [
      ['id', 'text'],
      ['attempts', 'integer'],
      ['lastStatus', 'integer'],
      ['latencyMs', 'integer'],
      ['excerpt', 'text'],
      ['at', 'timestamp'],
    ]);
    const raw = rawWrites(options.db);
    this.outcomes = groupCommit(
      async (batch) => {
        const failed = batch.flatMap((o) => ('failed' in o ? [o.failed] : []));
        // Successes, the common case, share one statement and write no log row of their own; a failure's
        // log row comes before its delivery's change (the follow-ups).
        const delivered = batch.flatMap((o) => ('delivered' in o ? [o.delivered] : []));
        const statements: Prisma.Sql[] = [];
        if (failed.length > 0) {
          const attempts = attemptTable(
            failed.map((a) => [
              newSortableId('att_', a.at),
              a.deliveryId,
              a.endpointId,
              a.eventId,
              a.statusCode,
              a.latencyMs,
              a.responseExcerpt,
              a.error,
              a.at,
            ]),
          );
          // A plain INSERT: a createMany is compiled anew for each number of rows.
          statements.push(
            Prisma.sql`INSERT INTO "WebhookAttempt" ("id", "deliveryId", "endpointId", "eventId", "statusCode", "latencyMs", "responseExcerpt", "error", "at") ${attempts}`,
          );
        }
        if (delivered.length > 0) {
          const rows = deliveredTable(delivered.map((d) => [d.id, d.attempts, d.lastStatus, d.latencyMs, d.excerpt, d.at]));
          statements.push(Prisma.sql`UPDATE "WebhookDelivery" SET "status" = 'DELIVERED', "attempts" = v."attempts", "lastStatus" = v."lastStatus",
          "lastError" = NULL, "deliveredAt" = v."at", "claimedUntil" = NULL, "successLatencyMs" = v."latencyMs", "successExcerpt" = v."excerpt"
          FROM (${rows}) AS v WHERE "WebhookDelivery"."id" = v."id"`);
        }
        // each on its own (see above): one raw statement costs less than Prisma's
        for (const statement of statements) await raw([statement]);
        for (const statement of batch.flatMap((o) => o.followUps)) await statement;
      },
      { delayMs: OUTCOME_DELAY_MS },
    );
    options.outbox.onWritten((unclaimedIds) => {
      if (unclaimedIds === undefined) {
        this.urgent = true;
        this.mayBeDue();
      } else {
        this.known += unclaimedIds.length;
        this.noteUnclaimed(unclaimedIds);
        this.exhausted = false;
      }
      this.wake();
    });
    options.outbox.handoff({
      // Only while no unclaimed delivery is known to be due, and no claim is running but a look: what is
      // taken then comes after everything already queued, in the order it was written.
      accepts: (deliveries) => {
        if (this.stopped) return null;
        if (
          this.exhausted &&
          this.unclaimed.size === 0 &&
          (!this.ticking || this.lookOnly) &&
          this.outstanding + deliveries.length <= this.options.concurrency * HANDOFF_BACKLOG &&
          deliveries.every((d) => {
            const key = keyOf(d);
            // a pair a claim skipped for being full has deliveries waiting in the database: they go first
            return !this.skipped.has(key) && (this.heldPerKey.get(key) ?? 0) < MAX_HELD_PER_KEY;
          })
        )
          return this.leaseUntil();
        this.noteUnclaimed(deliveries.map((d) => d.id));
        return null;
      },
      take: (rows) => this.take(rows),
      invalidate: (accountId) => {
        for (const [id, cached] of this.endpoints) if (cached.accountId === accountId) this.endpoints.delete(id);
      },
    });
  }

  /** A claim is a lease: a node that dies mid-request leaves it, and any node takes the delivery again once it ends. */
  private leaseUntil(): Date {
    return new Date(this.options.now().getTime() + this.options.timeoutMs * 2 + 5_000);
  }

  /** Deliveries written here already claimed by this loop, once their transaction committed. */
  private take(rows: OutboxRows[]): void {
    // Stopped meanwhile: they stay leased, and are claimed again once the lease ends.
    if (this.stopped) return;
    const at = performance.now();
    const claimed: Claimed[] = [];
    for (const { event, deliveries } of rows) {
      for (const d of deliveries) {
        const cached = this.endpoints.get(d.endpointId);
        claimed.push({
          id: d.id,
          eventId: d.eventId,
          endpointId: d.endpointId,
          sessionId: d.sessionId,
          attempts: 0,
          createdAt: d.createdAt,
          event: { id: event.id, type: event.type, data: event.data, createdAt: event.createdAt },
          // read for the attempt when not known (or no longer trusted)
          ...(cached && at - cached.at < ENDPOINT_CACHE_MS ? { endpoint: cached.endpoint } : {}),
        });
      }
    }
    this.enqueue(claimed);
  }

  /** Counts one more (+1) or one fewer (-1) delivery held for a pair. */
  private count(key: string, change: 1 | -1): void {
    const before = this.heldPerKey.get(key) ?? 0;
    const after = before + change;
    if (after === 0) this.heldPerKey.delete(key);
    else this.heldPerKey.set(key, after);
    if (change === 1) {
      if (after === MAX_HELD_PER_KEY) this.saturatedHeld += after;
      else if (after > MAX_HELD_PER_KEY) this.saturatedHeld += 1;
    } else if (before === MAX_HELD_PER_KEY) {
      this.saturatedHeld -= before;
      // room again: what a claim skipped of this pair may be waiting
      if (this.skipped.delete(key)) this.exhausted = false;
    } else if (before > MAX_HELD_PER_KEY) this.saturatedHeld -= 1;
  }

  private enqueue(claimed: Claimed[]): void {
    for (const row of claimed) {
      if (this.held.has(row.id)) continue;
      this.held.add(row.id);
      this.outstanding += 1;
      const key = keyOf(row);
      this.count(key, 1);
      const queue = this.queues.get(key);
      if (queue) queue.push(row);
      else {
        this.queues.set(key, [row]);
        const worker: Promise<void> = this.drain(key).finally(() => this.workers.delete(worker));
        this.workers.add(worker);
      }
    }
  }

  /** A place among the `concurrency` requests in flight. */
  private async place(): Promise<void> {
    if (this.active < this.options.concurrency) {
      this.active += 1;
      return;
    }
    await new Promise<void>((resolve) => this.places.push(resolve));
  }

  private leave(): void {
    const next = this.places.shift();
    if (next) next();
    else this.active -= 1;
  }

  /** A signer per secret: making one decodes its key. */
  private signer(secret: string): Signer {
    let signer = this.signers.get(secret);
    if (!signer) {
      if (this.signers.size >= 1_000) this.signers.clear();
      signer = signerOf(secret);
      this.signers.set(secret, signer);
    }
    return signer;
  }

  private claimSoon(ms: number): void {
    if (this.coalesceTimer || this.stopped) return;
    this.coalesceTimer = setTimeout(() => {
      this.coalesceTimer = null;
      this.wake();
    }, ms);
    this.coalesceTimer.unref();
  }

  private noteUnclaimed(ids: string[]): void {
    if (this.stopped) return;
    if (this.unclaimed.size + ids.length > MAX_UNCLAIMED) {
      // not tracked: claims go on until one finds no more
      this.mayBeDue();
      return;
    }
    const at = performance.now();
    for (const id of ids) this.unclaimed.set(id, at);
  }

  /**
   * The poll, or a retry's time: a claim looks for what has become due (a retry, another node's writes)
   * at the next chance. Nothing written here is known to wait in the database, so the handoff goes on
   * taking meanwhile: making it wait would send a busy loop's whole backlog through claims until the
   * loop has room to claim again.
   */
  private look(): void {
    this.urgent = true;
    this.looking = true;
    this.wake();
  }

  private mayBeDue(): void {
    this.dueSignals += 1;
    this.exhausted = false;
  }

  /** A retry is due at `at`: the loop looks for due deliveries then, if it has not by then. */
  private retryAt(at: Date): void {
    if (this.stopped) return;
    const ms = at.getTime();
    if (this.retryTimer && this.retryTimerAt <= ms) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimerAt = ms;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null;
        this.look();
      },
      Math.max(0, ms - this.options.now().getTime()),
    );
    this.retryTimer.unref();
  }

  start(): void {
    this.stopped = false;
    this.urgent = true;
    this.mayBeDue();
    this.pruner = setInterval(() => {
      this.prune().catch((err: unknown) => this.options.logger.warn({ err }, 'pruning old webhook events failed'));
    }, PRUNE_EVERY_MS);
    this.pruner.unref();
    // Deliveries can wait in memory longer than a lease (behind a slow receiver's): their leases are
    // renewed while they are held, so no other node takes them meanwhile.
    this.renewer = setInterval(() => {
      this.renew().catch((err: unknown) => this.options.logger.warn({ err }, 'renewing the leases of held webhook deliveries failed'));
    }, this.options.timeoutMs);
    this.renewer.unref();
    // SQLite is one process's database: what a start finds leased was leased before a crash or a restart
    // of this service, and is sent again now instead of when its lease ends. (Several nodes share
    // PostgreSQL, where a lease may be another node's: there it runs out.)
    if (!this.postgres && !this.releasing) {
      this.releasing = this.options.db.$executeRaw`UPDATE "WebhookDelivery" SET "claimedUntil" = NULL
        WHERE "status" = 'PENDING' AND "claimedUntil" IS NOT NULL`
        .then(
          () => undefined,
          (err: unknown) =>
            this.options.logger.warn(
              { err },
              'releasing webhook deliveries leased before the start failed; they are sent when their leases end',
            ),
        )
        .finally(() => {
          this.releasing = null;
          this.urgent = true;
          this.mayBeDue();
          this.wake();
        });
    }
    this.wake();
  }

  /** Extends the lease of every delivery held here that is still leased (an outcome already recorded is left alone). */
  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    await this.options.db.$executeRaw(this.renewal([...this.held], this.leaseUntil()));
  }

  /** Stops claiming and waits for the requests in flight; what is still queued is released to be claimed again. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    if (this.renewer) clearInterval(this.renewer);
    this.renewer = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.coalesceTimer) clearTimeout(this.coalesceTimer);
    this.coalesceTimer = null;
    this.pruner = null;
    this.timer = null;
    this.unclaimed.clear();
    await this.releasing;
    await this.ticking;
    // Emptied in place: each worker finishes its request in flight and then finds its queue empty.
    const left = [...this.queues.values()].flatMap((queue) => queue.splice(0));
    for (const c of left) {
      this.held.delete(c.id);
      this.count(keyOf(c), -1);
    }
    this.outstanding -= left.length;
    await Promise.all([...this.workers]);
    await this.outcomes.settled();
    const agent = this.agent;
    this.agent = null;
    await agent?.close().catch(() => undefined);
    if (left.length > 0) {
      await this.options.db.webhookDelivery
        .updateMany({ where: { id: { in: left.map((c) => c.id) }, status: 'PENDING' }, data: { claimedUntil: null } })
        .catch((err: unknown) =>
          this.options.logger.warn({ err }, 'releasing claimed webhook deliveries failed; they are claimed again when their lease ends'),
        );
    }
  }

  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    // Every finished attempt wakes the loop; while a tick would claim nothing, the wake costs nothing
    // (the poll's timer, armed after the last tick, stays as it is).
    if (this.timer && !this.releasing && !this.mayClaim()) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ticking = this.tick().finally(() => {
      this.ticking = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.wake();
        return;
      }
      this.timer = setTimeout(() => this.look(), this.options.pollMs ?? 1_000);
      this.timer.unref();
    });
  }

  /**
   * Whether a claim may find something and has room: not when the last one found all there was (unless
   * asked to look again), nor while twice the places' worth are held. What full pairs hold does not
   * count: they wait on their receivers, and the others' deliveries go on.
   */
  private mayClaim(): boolean {
    return (!this.exhausted || this.looking) && this.outstanding - this.saturatedHeld < this.options.concurrency * 2;
  }

  private async tick(): Promise<void> {
    if (this.releasing) return;
    const { concurrency } = this.options;
    // Under load every finished attempt and every write wakes the loop; a claim each time would cost a
    // statement for a few deliveries. A busy loop claims once fewer than twice its places' worth are held
    // (in flight or queued), then as many as the handoff may hold, so a claim takes dozens.
    if (!this.mayClaim()) return;
    const room = concurrency * CLAIM_BACKLOG - (this.outstanding - this.saturatedHeld);
    const quarter = Math.ceil(concurrency / 4);
    if (!this.urgent && this.known < quarter) {
      const wait = this.lastClaimAt + COALESCE_MS - performance.now();
      if (wait > 0) {
        this.claimSoon(wait);
        return;
      }
    }
    this.urgent = false;
    this.looking = false;
    const began = performance.now();
    this.lastClaimAt = began;
    const signals = this.dueSignals;
    const full = [...this.heldPerKey].filter(([, n]) => n >= MAX_HELD_PER_KEY).map(([key]) => key);
    let claimed: Claimed[];
    this.lookOnly = this.exhausted;
    try {
      claimed = await this.claim(room, full);
    } catch (err) {
      this.options.logger.error({ err }, 'claiming webhook deliveries failed');
      return;
    } finally {
      this.lookOnly = false;
    }
    this.known = Math.max(0, this.known - claimed.length);
    for (const c of claimed) this.unclaimed.delete(c.id);
    if (claimed.length < room) {
      // Every due row committed before the claim is in it, but those of the full pairs: they are claimed
      // once their pair has room again, and until then the handoff takes nothing of that pair (they
      // come first).
      for (const key of full) this.skipped.add(key);
      for (const [id, at] of this.unclaimed) if (at < began) this.unclaimed.delete(id);
      if (signals === this.dueSignals && this.unclaimed.size === 0) {
        this.exhausted = true;
        this.known = 0;
      }
    }
    claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.eventId < b.eventId ? -1 : 1));
    this.enqueue(claimed);
    if (claimed.length === room) {
      // there may be more: the next tick claims again, even after a look
      this.again = true;
      this.looking = true;
    }
  }

  private async drain(key: string): Promise<void> {
    for (;;) {
      const queue = this.queues.get(key);
      const row = queue?.shift();
      if (!queue || !row) {
        this.queues.delete(key);
        return;
      }
      const couldNotRecord = (err: unknown) =>
        this.options.logger.error(
          { err, deliveryId: row.id },
          'a webhook attempt could not be recorded; it is tried again when its lease ends',
        );
      const behind: { write?: Promise<void> } = {};
      await this.place();
      try {
        await this.attempt(row, (write) => {
          behind.write = write;
        });
      } catch (err) {
        couldNotRecord(err);
      } finally {
        this.leave();
      }
      // A success's record is written behind, so the session's next event goes out meanwhile and more
      // outcomes share a write; the delivery stays leased until then. Only so many wait at once.
      const recording = behind.write;
      if (recording) {
        this.unrecorded += 1;
        const settled = recording.catch(couldNotRecord).finally(() => {
          this.unrecorded -= 1;
        });
        if (this.unrecorded > this.options.concurrency) await settled;
      }
      this.outstanding -= 1;
      this.held.delete(row.id);
      this.count(key, -1);
      if (queue.length === 0) this.queues.delete(key);
      this.wake();
      if (queue.length === 0) return;
    }
  }

  /**
   * Deletes what is past the retention: finished deliveries (delivered or given up), with their events'
   * payloads, and their attempt logs. Pending ones stay, whatever their age.
   */
  async prune(): Promise<{ deliveries: number }> {
    const { db } = this.options;
    const cutoff = new Date(this.options.now().getTime() - this.options.retentionMs);
    const old = { status: { in: ['DELIVERED', 'FAILED'] }, createdAt: { lt: cutoff } };
    await db.$executeRaw`DELETE FROM "WebhookAttempt" WHERE "deliveryId" IN (SELECT "id" FROM "WebhookDelivery" WHERE "status" IN ('DELIVERED', 'FAILED') AND "createdAt" < ${cutoff})`;
    const deliveries = (await db.webhookDelivery.deleteMany({ where: old })).count;
    return { deliveries };
  }

  private async readEndpoint(id: string): Promise<EndpointOfAttempt | null> {
    const endpoint = await this.options.db.webhookEndpoint.findUnique({ where: { id }, select: ENDPOINT_OF_ATTEMPT });
    this.remember(id, endpoint);
    return endpoint;
  }

  private remember(id: string, endpoint: EndpointOfAttempt | null): void {
    if (this.endpoints.size >= 1_000) this.endpoints.clear();
    this.endpoints.set(id, { at: performance.now(), endpoint, accountId: endpoint?.accountId ?? '' });
  }

  /**
   * Claims up to `limit` due deliveries, each with its event. Oldest due first, along the (status,
   * nextAttemptAt) index, so a claim stops after `limit` rows instead of sorting every due one; a fresh
   * delivery is due when it is written, so for a healthy receiver this is the order of writing. The
   * endpoints not read within ENDPOINT_CACHE_MS are read with one more query, instead of with each row
   * (a claim of a hundred deliveries is mostly of one endpoint).
   */
  private async claim(limit: number, skip: string[]): Promise<Claimed[]> {
    const now = this.options.now();
    const leaseUntil = this.leaseUntil();
    const lock = this.postgres ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.empty;
    // the pair's key as keyOf makes it
    const skipped =
      skip.length === 0 ? Prisma.empty : Prisma.sql`AND ("endpointId" || '|' || COALESCE("sessionId", '')) NOT IN (${this.texts(skip)})`;
    const rows = await this.options.db.$queryRaw<ClaimRow[]>`UPDATE "WebhookDelivery" SET "claimedUntil" = ${leaseUntil}
      WHERE "id" IN (SELECT "id" FROM "WebhookDelivery" WHERE "status" = 'PENDING' AND "nextAttemptAt" <= ${now}
        AND ("claimedUntil" IS NULL OR "claimedUntil" < ${now}) ${skipped} ORDER BY "nextAttemptAt", "eventId" LIMIT ${limit} ${lock})
      RETURNING "id", "eventId", "type", "data", "endpointId", "sessionId", "attempts", "createdAt"`;
    const at = performance.now();
    const stale = [...new Set(rows.map((r) => r.endpointId))].filter((id) => {
      const cached = this.endpoints.get(id);
      return !cached || at - cached.at >= ENDPOINT_CACHE_MS;
    });
    if (stale.length > 0) {
      try {
        const found = await this.options.db.webhookEndpoint.findMany({ where: { id: { in: stale } }, select: ENDPOINT_OF_ATTEMPT });
        for (const id of stale) this.remember(id, found.find((e) => e.id === id) ?? null);
      } catch (err) {
        // each attempt reads its endpoint then
        this.options.logger.warn({ err }, 'reading the endpoints of claimed webhook deliveries failed');
      }
    }
    return rows.map((r) => {
      const cached = this.endpoints.get(r.endpointId);
      return {
        id: r.id,
        eventId: r.eventId,
        endpointId: r.endpointId,
        sessionId: r.sessionId,
        attempts: Number(r.attempts),
        createdAt: new Date(r.createdAt),
        event: { id: r.eventId, type: r.type, data: r.data, createdAt: new Date(r.createdAt) },
        ...(cached && at - cached.at < ENDPOINT_CACHE_MS ? { endpoint: cached.endpoint } : {}),
      };
    });
  }

  /**
   * One attempt of one delivery, its log row, and what it means for the delivery and the endpoint.
   * `writeBehind`: given, a success's record is handed to it instead of being waited for.
   */
  async attempt(row: Claimed, writeBehind?: (write: Promise<void>) => void): Promise<void> {
    const record = (outcome: Outcome): Promise<void> => this.outcomes.add(outcome);
    const { db, logger } = this.options;
    const { event } = row;
    const endpoint = row.endpoint !== undefined ? row.endpoint : await this.readEndpoint(row.endpointId);
    if (!endpoint?.enabled) {
      const reason = !endpoint ? 'the endpoint was deleted' : 'the endpoint is disabled';
      await db.webhookDelivery.update({ where: { id: row.id }, data: { status: 'FAILED', lastError: reason, claimedUntil: null } });
      return;
    }
    const body = payloadOf(event);
    const sentAt = this.options.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil > sentAt)
      secrets.push(endpoint.previousSecret);
    const signature = secrets.map((s) => this.signer(s)(event.id, sentAt, body)).join(' ');
    const rules = this.options.urlRules;
    // A literal address connects without a lookup, so the guard of the connections never sees it.
    let answer: Answer;
    if (!this.options.allowPrivate && rules.isLiteralPrivateHost(endpoint.url))
      answer = { statusCode: null, excerpt: null, error: `url ${rules.privateMessage}`, latencyMs: 0 };
    else {
      this.agent ??= new Agent({ connect: { lookup: guardedLookup(this.options.allowPrivate, rules, this.options.resolveHost) } });
      answer = await post(this.agent, endpoint.url, { id: event.id, sentAt, signature }, body, this.options.timeoutMs);
    }
    const { statusCode, excerpt, error, latencyMs } = answer;
    const at = this.options.now();
    const attempts = row.attempts + 1;
    const ok = isSuccess(answer);
    this.options.onAttempt?.(ok ? 'delivered' : 'failed', latencyMs / 1000);

    if (ok) {
      if (endpoint.failingSince) this.endpoints.delete(endpoint.id);
      this.failures.delivered(endpoint);
      const followUps = endpoint.failingSince
        ? [db.webhookEndpoint.updateMany({ where: { id: endpoint.id }, data: { failingSince: null } })]
        : [];
      const write = record({
        delivered: { id: row.id, attempts, lastStatus: statusCode ?? 0, latencyMs, excerpt, at },
        followUps,
      });
      if (writeBehind) writeBehind(write);
      else await write;
      return;
    }

    // what the outcome changes of the endpoint is read again for the next attempt
    this.endpoints.delete(endpoint.id);
    const { delivery, disabledReason, failingSince } = failureOf({
      answer,
      attempts,
      at,
      eventCreatedAt: event.createdAt,
      failingSince: endpoint.failingSince,
      retryForMs: this.options.retryForMs,
      retryBaseMs: this.options.retryBaseMs,
      retryMaxMs: this.options.retryMaxMs,
    });
    await record({
      failed: {
        deliveryId: row.id,
        endpointId: endpoint.id,
        eventId: event.id,
        statusCode,
        latencyMs,
        responseExcerpt: excerpt,
        error,
        at,
      },
      followUps: [
        db.webhookDelivery.update({ where: { id: row.id }, data: { ...delivery, attempts, lastStatus: statusCode, claimedUntil: null } }),
        disabledReason
          ? db.webhookEndpoint.updateMany({ where: { id: endpoint.id }, data: { enabled: false, disabledReason, failingSince } })
          : db.webhookEndpoint.updateMany({ where: { id: endpoint.id, failingSince: null }, data: { failingSince } }),
      ],
    });
    if (delivery.nextAttemptAt) this.retryAt(delivery.nextAttemptAt);
    if (!disabledReason) this.failures.failed(endpoint, at, error ?? `HTTP ${statusCode}`);
    if (disabledReason) {
      this.failures.forget(endpoint.id);
      this.options.outbox.invalidate(endpoint.accountId);
      logger.warn({ endpointId: endpoint.id, accountId: endpoint.accountId, reason: disabledReason }, 'webhook endpoint disabled');
    }
  }
}
