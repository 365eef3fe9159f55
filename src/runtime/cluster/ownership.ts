import { randomInt, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../ports/db.ts';
import type { Claim, Fence, Ownership, OwnershipHandlers } from '../ports/cluster.ts';

/** SQLite, or a process outside a cluster: this node owns every session and nothing is checked. */
export const singleNode = (): Ownership => ({
  nodeId: 'single',
  clustered: false,
  owns: () => true,
  owned: () => undefined,
  confirm: async () => true,
  fence: () => undefined,
  route: async () => ({ at: 'here' }),
  // One process: what another one left running is released at the start (releaseUnfinished).
  alive: async () => true,
  counts: { renewals: 0, losses: 0, handovers: 0 },
});

/** How many sessions a node above its share hands over per scan (a second): each re-links on its new owner. */
const SHED_PER_SCAN = 16;
/** A session claimed this recently is not handed over: it may be in the middle of linking (a QR, a pairing code). */
const SHED_AFTER_MS = 10_000;
/** The first key of every node's liveness lock (pg_try_advisory_lock(int, int)); the second is the node's lockKey. */
const LOCK_CLASS = 0x5e55;
// Leases are compared with the database's clock only, so the nodes' clocks may disagree.
const NOW = `(now() AT TIME ZONE 'UTC')`;
const PLUS_TTL = `${NOW} + $2 * interval '1 millisecond'`;
/** A node counts as alive while its row is renewed and its process holds its advisory lock (released by the server when the process dies). */
const alive = (n: string) => `(${n}."expiresAt" > ${NOW} AND EXISTS (
  SELECT 1 FROM pg_locks k
  WHERE k.locktype = 'advisory' AND k.granted AND k.classid = ${LOCK_CLASS}::oid AND k.objid = ${n}."lockKey"::oid AND k.objsubid = 2
    AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())))`;

export interface ClusterOptions {
  db: Db;
  databaseUrl: string;
  logger: Logger;
  ttlMs: number;
  /** how often unowned and lapsed sessions are looked for */
  scanMs?: number;
  /** a session claimed this recently is not handed over to balance the nodes */
  shedAfterMs?: number;
  nodeId?: string;
}

/**
 * One owner per session on PostgreSQL (issue 34; the why is in docs/operations.md "Several nodes").
 * A lease row per session (SessionLease: owner, epoch, expiry by the database clock) renewed by the
 * owner every third of the TTL, and a row per node (ClusterNode) with the address others forward to.
 * Each node also holds an advisory lock on a connection of its own: the server drops it the moment the
 * process dies, so a crashed node's sessions are claimable at the next scan instead of after the TTL,
 * while a paused or cut-off node (whose connection looks alive) loses them when its leases lapse.
 * Every claim raises the epoch; a send is refused unless the row still holds this node's epoch.
 */
export class PostgresOwnership implements Ownership {
  readonly nodeId: string;
  readonly clustered = true;
  readonly counts = { renewals: 0, losses: 0, handovers: 0 };
  private readonly held = new Map<string, number>();
  /** performance.now() when this node claimed each session it holds */
  private readonly heldSince = new Map<string, number>();
  /** performance.now() up to which the last renewal keeps this node's leases, a margin before the database lets them go */
  private validUntil = 0;
  private lockClient: pg.Client | undefined;
  private lockKey = 0;
  private address = '';
  private handlers: OwnershipHandlers | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private queue: Promise<void> = Promise.resolve();
  /** the handlers' work of the last loss or gain, which the next waits for */
  private handling: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly scanMs: number;
  private readonly shedAfterMs: number;
  /**
   * performance.now() when this node handed each session over to balance the nodes: its lease (lapsed,
   * still naming this node) is not renewed here until a TTL has passed, so that another node can claim it.
   */
  private readonly handedOver = new Map<string, number>();

  constructor(private readonly options: ClusterOptions) {
    this.nodeId = options.nodeId ?? randomUUID();
    this.scanMs = options.scanMs ?? 1_000;
    this.shedAfterMs = options.shedAfterMs ?? SHED_AFTER_MS;
  }

  owns(sessionId: string): boolean {
    return !this.stopped && this.held.has(sessionId) && performance.now() < this.validUntil;
  }

  owned(): string[] {
    return [...this.held.keys()].filter((id) => this.owns(id));
  }

  async confirm(sessionId: string): Promise<boolean> {
    const epoch = this.held.get(sessionId);
    if (epoch === undefined || !this.owns(sessionId)) return false;
    const rows = await this.options.db.$queryRawUnsafe<unknown[]>(
      `SELECT 1 FROM "SessionLease" WHERE "sessionId" = $1 AND "nodeId" = $2 AND epoch = $3 AND "expiresAt" > ${NOW}`,
      sessionId,
      this.nodeId,
      epoch,
    );
    return rows.length === 1;
  }

  fence(sessionId: string): Fence | undefined {
    const epoch = this.held.get(sessionId);
    return epoch === undefined || !this.owns(sessionId) ? undefined : { nodeId: this.nodeId, epoch };
  }

  async route(sessionId: string): Promise<{ at: 'here' } | { at: 'owner'; address: string; nodeId: string } | { at: 'unknown' }> {
    if (this.owns(sessionId)) return { at: 'here' };
    for (let attempt = 0; attempt < 2; attempt++) {
      const [row] = await this.options.db.$queryRawUnsafe<Array<{ nodeId: string; address: string | null; live: boolean }>>(
        `SELECT l."nodeId", n.address, (l."expiresAt" > ${NOW} AND n.id IS NOT NULL AND ${alive('n')}) AS live
         FROM "SessionLease" l LEFT JOIN "ClusterNode" n ON n.id = l."nodeId" WHERE l."sessionId" = $1`,
        sessionId,
      );
      if (row?.live) {
        if (row.nodeId === this.nodeId) {
          // This node's own scan or claim has written the lease and not yet recorded it: once the work
          // under way is done, the session is here (or was given up meanwhile).
          await this.serial(() => Promise.resolve());
          return this.owns(sessionId) ? { at: 'here' } : { at: 'unknown' };
        }
        return row.address ? { at: 'owner', address: row.address, nodeId: row.nodeId } : { at: 'unknown' };
      }
      // A session whose owner is gone, or which was just handed over, goes to whoever has room at the next
      // scan (within a second); only a session nobody ever held is claimed by the request that reaches it.
      if (row || !(await this.validLocally())) return { at: 'unknown' };
      const claimed = await this.serial(() => this.claimOne(sessionId)).catch(() => undefined);
      // No session row (the request will answer 404 here), or claimed now.
      if (claimed === undefined) return { at: 'here' };
      if (claimed) {
        this.gain([claimed]);
        return { at: 'here' };
      }
    }
    return { at: 'unknown' };
  }

  async alive(nodeId: string): Promise<boolean> {
    if (nodeId === this.nodeId) return !this.stopped;
    const rows = await this.options.db.$queryRawUnsafe<unknown[]>(
      `SELECT 1 FROM "ClusterNode" n WHERE n.id = $1 AND ${alive('n')}`,
      nodeId,
    );
    return rows.length === 1;
  }

  /** Registers the node and claims its first sessions; `handlers` hear of later changes only. */
  async start(handlers: OwnershipHandlers): Promise<Claim[]> {
    await this.holdLock();
    await this.options.db.$executeRawUnsafe(`DELETE FROM "ClusterNode" WHERE "expiresAt" < ${NOW} - interval '1 hour'`);
    await this.renew();
    const first = await this.scan();
    this.handlers = handlers;
    this.every(Math.max(250, Math.floor(this.options.ttlMs / 3)), () => this.serial(() => this.renew()));
    this.every(this.scanMs, async () => {
      const claims = await this.serial(() => this.scan());
      if (claims.length > 0) this.gain(claims, false);
    });
    // Self-fencing: leases this node could not renew in time are given up before any other node may take them.
    this.every(250, async () => {
      if (this.held.size > 0 && performance.now() >= this.validUntil) this.lose([...this.held.keys()], 'lease not renewed in time');
    });
    return first;
  }

  /** The base URL other nodes forward to, known once the server listens. */
  async setAddress(address: string): Promise<void> {
    this.address = address;
    await this.options.db.$executeRawUnsafe(`UPDATE "ClusterNode" SET address = $2 WHERE id = $1`, this.nodeId, address);
  }

  /** Shutdown, after the links are closed: the leases lapse at once so other nodes take the sessions at their next scan. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.counts.handovers += this.held.size;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const { db } = this.options;
    await db
      .$executeRawUnsafe(`UPDATE "SessionLease" SET "expiresAt" = ${NOW} - interval '1 millisecond' WHERE "nodeId" = $1`, this.nodeId)
      .catch((err: unknown) => this.options.logger.warn({ err }, 'releasing session leases failed'));
    await db.$executeRawUnsafe(`DELETE FROM "ClusterNode" WHERE id = $1`, this.nodeId).catch(() => undefined);
    this.held.clear();
    this.heldSince.clear();
    await this.lockClient?.end().catch(() => undefined);
    this.lockClient = undefined;
  }

  /**
   * Renewals, scans and claims one after another: a renewal that ran beside a claim would not see the
   * session just claimed and would take it for lost.
   */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work);
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  private every(ms: number, run: () => Promise<void>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || this.stopped) return;
      busy = true;
      run()
        .catch((err: unknown) => this.options.logger.warn({ err, nodeId: this.nodeId }, 'cluster lease work failed'))
        .finally(() => {
          busy = false;
        });
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private async validLocally(): Promise<boolean> {
    return !this.stopped && performance.now() < this.validUntil;
  }

  /** The liveness lock, on a connection of its own; when that connection is lost, so is the lock, and the node fences itself. */
  private async holdLock(): Promise<void> {
    if (this.lockClient) return;
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('error', (err) => {
      this.options.logger.error({ err, nodeId: this.nodeId }, 'the cluster lock connection failed; closing every link of this node');
      if (this.lockClient === client) this.lockClient = undefined;
      this.validUntil = 0;
      this.lose([...this.held.keys()], 'lock connection lost');
    });
    await client.connect();
    for (;;) {
      const key = randomInt(1, 2 ** 31 - 1);
      const result = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [LOCK_CLASS, key]);
      if (result.rows[0]?.ok) {
        this.lockKey = key;
        break;
      }
    }
    this.lockClient = client;
  }

  private async renew(): Promise<void> {
    const started = performance.now();
    const { db, ttlMs } = this.options;
    await this.holdLock();
    const node = await db.$executeRawUnsafe(
      `UPDATE "ClusterNode" SET "expiresAt" = ${PLUS_TTL}, "lockKey" = $3, address = $4 WHERE id = $1`,
      this.nodeId,
      ttlMs,
      this.lockKey,
      this.address,
    );
    if (node === 0) {
      await db.$executeRawUnsafe(
        `INSERT INTO "ClusterNode" (id, address, "lockKey", "startedAt", "expiresAt") VALUES ($1, $4, $3, ${NOW}, ${PLUS_TTL})`,
        this.nodeId,
        ttlMs,
        this.lockKey,
        this.address,
      );
    }
    // A session handed over keeps naming this node in its lapsed lease until another node claims it: renewed
    // here, it came back at once (the node taking it back, then handing it over again at its next scan). Only
    // a session no other node claimed within a TTL is taken back, so that none is left without an owner.
    for (const [id, at] of this.handedOver) if (started - at >= ttlMs) this.handedOver.delete(id);
    // Locked in the order the key writes lock them (auth-store.ts), so the two never wait on each other in a circle.
    const rows = await db.$queryRawUnsafe<Claim[]>(
      `UPDATE "SessionLease" l SET "expiresAt" = ${PLUS_TTL}
       FROM (SELECT "sessionId" FROM "SessionLease" WHERE "nodeId" = $1 AND NOT ("sessionId" = ANY($3::text[]))
             ORDER BY "sessionId" COLLATE "C" FOR NO KEY UPDATE) AS mine
       WHERE l."sessionId" = mine."sessionId" RETURNING l."sessionId", l.epoch`,
      this.nodeId,
      ttlMs,
      [...this.handedOver.keys()],
    );
    if (this.stopped) return;
    this.counts.renewals += rows.length;
    // A margin below the TTL for the time the statement took to reach the database.
    this.validUntil = started + ttlMs - Math.min(1_000, ttlMs / 10);
    const current = new Map(rows.map((r) => [r.sessionId, r.epoch]));
    const lost = [...this.held].filter(([id, epoch]) => current.get(id) !== epoch).map(([id]) => id);
    if (lost.length > 0) {
      // A deleted session's lease went with its row: that is no loss.
      const claimed = await db.$queryRawUnsafe<Array<{ sessionId: string }>>(
        `SELECT "sessionId" FROM "SessionLease" WHERE "sessionId" = ANY($1::text[])`,
        lost,
      );
      const taken = new Set(claimed.map((r) => r.sessionId));
      for (const id of lost) if (!taken.has(id)) this.drop(id);
      if (taken.size > 0) this.lose([...taken], 'another node claimed them');
    }
    // Leases still this node's that it had given up (it could not renew in time, and no other node took them).
    const back = rows.filter((r) => !this.held.has(r.sessionId));
    if (back.length > 0 && this.handlers) {
      this.options.logger.info({ nodeId: this.nodeId, ids: back.map((r) => r.sessionId) }, 'took back sessions no other node claimed');
      this.gain(back);
    }
  }

  /** Claims sessions nobody holds, and those of dead or lapsed nodes, up to this node's share. */
  private async scan(): Promise<Claim[]> {
    if (!(await this.validLocally())) return [];
    const { db, ttlMs } = this.options;
    const [sizes] = await db.$queryRawUnsafe<Array<{ total: number; live: number }>>(
      `SELECT (SELECT count(*) FROM "Session")::int AS total, (SELECT count(*) FROM "ClusterNode" n WHERE ${alive('n')})::int AS live`,
    );
    let room = Math.ceil((sizes?.total ?? 0) / Math.max(1, sizes?.live ?? 1)) - this.held.size;
    if (room < 0) await this.shed(Math.min(-room, SHED_PER_SCAN));
    if (room <= 0) return [];
    const fresh = await db.$queryRawUnsafe<Claim[]>(
      `INSERT INTO "SessionLease" ("sessionId", "nodeId", epoch, "expiresAt")
       SELECT s.id, $1, 1, ${PLUS_TTL} FROM "Session" s
       WHERE NOT EXISTS (SELECT 1 FROM "SessionLease" l WHERE l."sessionId" = s.id)
       ORDER BY s."createdAt", s.id LIMIT $3
       ON CONFLICT ("sessionId") DO NOTHING RETURNING "sessionId", epoch`,
      this.nodeId,
      ttlMs,
      room,
    );
    room -= fresh.length;
    const taken =
      room > 0
        ? await db.$queryRawUnsafe<Claim[]>(
            // The live nodes once per statement (pg_locks is a snapshot of the lock table), not once per lease.
            `WITH live AS MATERIALIZED (SELECT n.id FROM "ClusterNode" n WHERE ${alive('n')})
             UPDATE "SessionLease" l SET "nodeId" = $1, epoch = l.epoch + 1, "expiresAt" = ${PLUS_TTL}
             FROM (SELECT c."sessionId" FROM "SessionLease" c
                   WHERE c."nodeId" <> $1 AND (c."expiresAt" < ${NOW} OR c."nodeId" NOT IN (SELECT id FROM live))
                   ORDER BY c."sessionId" LIMIT $3 FOR UPDATE OF c SKIP LOCKED) AS due
             WHERE l."sessionId" = due."sessionId" RETURNING l."sessionId", l.epoch`,
            this.nodeId,
            ttlMs,
            room,
          )
        : [];
    const claims = [...fresh, ...taken];
    if (this.stopped) return [];
    for (const claim of claims) this.hold(claim);
    if (claims.length > 0)
      this.options.logger.info({ nodeId: this.nodeId, sessions: claims.length, ids: claims.map((c) => c.sessionId) }, 'claimed sessions');
    return claims;
  }

  /**
   * Balance: a node above its share (a node joined) hands sessions over, those without a link first,
   * then connected ones (never one in the middle of linking): their links close here, then their leases
   * lapse at once, and the node with room claims them at its next scan.
   */
  private async shed(count: number): Promise<void> {
    const { db } = this.options;
    const rows = await db.$queryRawUnsafe<Array<{ sessionId: string }>>(
      `SELECT l."sessionId" FROM "SessionLease" l JOIN "Session" s ON s.id = l."sessionId"
       WHERE l."nodeId" = $1 AND (NOT s."autoConnect" OR s.status = 'CONNECTED')
       ORDER BY s."autoConnect", l."sessionId" LIMIT $2`,
      this.nodeId,
      count + this.heldSince.size,
    );
    const settled = performance.now() - this.shedAfterMs;
    // Only the sessions handed over are dropped: dropping every candidate before keeping `count` of them left
    // the others linked here but not held (requests answered 409, due messages' jobs ended) until the next
    // renewal took them back and adopted them again.
    const ids = rows
      .map((r) => r.sessionId)
      .filter((id) => this.held.has(id) && (this.heldSince.get(id) ?? 0) < settled)
      .slice(0, count);
    if (ids.length === 0) return;
    for (const id of ids) {
      this.drop(id);
      this.handedOver.set(id, performance.now());
    }
    this.counts.handovers += ids.length;
    this.options.logger.info({ nodeId: this.nodeId, sessions: ids.length, ids }, 'handing sessions over to balance the nodes');
    await this.handlers?.lost(ids);
    await db.$executeRawUnsafe(
      `UPDATE "SessionLease" SET "expiresAt" = ${NOW} - interval '1 millisecond' WHERE "sessionId" = ANY($1::text[]) AND "nodeId" = $2`,
      ids,
      this.nodeId,
    );
  }

  /** One session, now: it has no lease, or its owner is dead or lapsed. null when another node holds it. */
  private async claimOne(sessionId: string): Promise<Claim | null> {
    const [claim] = await this.options.db.$queryRawUnsafe<Claim[]>(
      `INSERT INTO "SessionLease" ("sessionId", "nodeId", epoch, "expiresAt") VALUES ($3, $1, 1, ${PLUS_TTL})
       ON CONFLICT ("sessionId") DO UPDATE SET "nodeId" = EXCLUDED."nodeId", epoch = "SessionLease".epoch + 1, "expiresAt" = EXCLUDED."expiresAt"
       WHERE "SessionLease"."expiresAt" < ${NOW}
         OR NOT EXISTS (SELECT 1 FROM "ClusterNode" n WHERE n.id = "SessionLease"."nodeId" AND ${alive('n')})
       RETURNING "sessionId", epoch`,
      this.nodeId,
      this.options.ttlMs,
      sessionId,
    );
    if (!claim || this.stopped) return null;
    this.hold(claim);
    return claim;
  }

  private hold(claim: Claim): void {
    this.handedOver.delete(claim.sessionId);
    if (!this.held.has(claim.sessionId)) this.heldSince.set(claim.sessionId, performance.now());
    this.held.set(claim.sessionId, claim.epoch);
  }

  private drop(sessionId: string): boolean {
    this.heldSince.delete(sessionId);
    return this.held.delete(sessionId);
  }

  /**
   * The handlers hear of losses and gains in the order they happened: a session lost (its lock connection
   * cut) and taken back by the renewal under way was adopted while the loss still closed its link, found
   * its entry there and was skipped, then closed: held here, with no link, until it moved.
   */
  private inTurn(work: () => Promise<void> | void): Promise<void> {
    const next = this.handling.then(work);
    this.handling = next.catch(() => undefined);
    return next;
  }

  private gain(claims: Claim[], record = true): void {
    if (record) for (const claim of claims) this.hold(claim);
    this.inTurn(() => this.handlers?.gained(claims)).catch((err: unknown) =>
      this.options.logger.error({ err, nodeId: this.nodeId }, 'taking over sessions failed'),
    );
  }

  private lose(sessionIds: string[], why: string): void {
    const lost = sessionIds.filter((id) => this.drop(id));
    if (lost.length === 0) return;
    this.counts.losses += lost.length;
    this.options.logger.warn({ nodeId: this.nodeId, sessions: lost.length, ids: lost, why }, 'lost sessions; their links are closed');
    this.inTurn(() => this.handlers?.lost(lost)).catch((err: unknown) =>
      this.options.logger.error({ err, nodeId: this.nodeId }, 'closing the links of lost sessions failed'),
    );
  }
}
