import { createHash, randomUUID } from 'node:crypto';
import type { RecurringTimer } from '../generated/sqlite/client.ts';
import type { Deps, RequestContext } from './context.ts';
import { jobContext } from './context.ts';
import { requireLink } from './delivery.ts';
import { DomainError, notFound } from './errors.ts';
import { ownSession } from './sessions.ts';

/** What a recurring timer sends each time, as the resolver that created it understands it. */
export type RecurringPayload = Record<string, unknown>;

export interface RecurringView {
  timerId: string;
  sessionId: string;
  to: string;
  message: string;
  everyMs: number;
  createdAt: string;
}

const payloadOf = (row: Pick<RecurringTimer, 'payload'>): RecurringPayload => JSON.parse(row.payload) as RecurringPayload;

const viewOf = (row: RecurringTimer): RecurringView => {
  const payload = payloadOf(row);
  return {
    timerId: row.id,
    sessionId: row.sessionId,
    to: String(payload.to),
    message: String(payload.text),
    everyMs: Number(row.everyMs),
    createdAt: row.createdAt.toISOString(),
  };
};

/**
 * Shared by recurring messages and statuses: a connected session, then a RecurringTimer row that the
 * session's owner arms (here, as the request reached the owner; after a restart or a failover, the
 * owner that takes the session arms it again from the row).
 */
export const registerRecurring = async (
  ctx: RequestContext,
  sessionId: string,
  everyMs: number,
  payload: RecurringPayload,
): Promise<{ ok: true; recurringEveryMs: number; timerId: string }> => {
  const session = await ownSession(ctx, sessionId);
  requireLink(ctx, session);
  const cap = ctx.settings.MAX_RECURRING_PER_ACCOUNT;
  // Counted from the rows, so across the cluster; two creates racing may both pass the last place.
  if (cap > 0 && (await ctx.db.recurringTimer.count({ where: { accountId: ctx.caller.accountId, cancelledAt: null } })) >= cap) {
    throw new DomainError('CONFLICT', `This account already has the most recurring timers allowed (${cap}); cancel one first`);
  }
  const timerId = randomUUID();
  const createdAt = ctx.now();
  const nextAt = new Date(createdAt.getTime() + everyMs);
  await ctx.db.recurringTimer.create({
    data: {
      id: timerId,
      accountId: ctx.caller.accountId,
      sessionId,
      kind: payload.kind === 'status' ? 'status' : 'message',
      payload: JSON.stringify(payload),
      everyMs: BigInt(everyMs),
      nextAt,
      createdAt,
    },
  });
  await ctx.jobs.armRecurring(timerId, sessionId, nextAt);
  return { ok: true, recurringEveryMs: everyMs, timerId };
};

/** Messages and statuses alike. */
export const listRecurring = async (ctx: RequestContext, sessionId: string): Promise<{ count: number; items: RecurringView[] }> => {
  await ownSession(ctx, sessionId);
  const rows = await ctx.db.recurringTimer.findMany({
    where: { sessionId, cancelledAt: null },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const items = rows.map(viewOf);
  return { count: items.length, items };
};

/** From any node: the row says it is cancelled, and a node that has it armed finds that when it fires. */
export const cancelRecurring = async (ctx: RequestContext, sessionId: string, timerId: string): Promise<{ ok: true }> => {
  await ownSession(ctx, sessionId);
  const cancelled = await ctx.db.recurringTimer.updateMany({
    where: { id: timerId, sessionId, cancelledAt: null },
    data: { cancelledAt: ctx.now() },
  });
  if (cancelled.count === 0) throw notFound('Recurring message');
  await ctx.jobs.disarmRecurring(timerId);
  return { ok: true };
};

/**
 * The occurrence after `at`: the next on the timer's grid (createdAt + n × everyMs) that is still ahead.
 * Occurrences missed while no node fired them (the service was down, the session between owners) are
 * not caught up: the one found due fires once, late, and the rest are skipped.
 */
const nextAfter = (at: number, everyMs: number, now: number): number => {
  const next = at + everyMs;
  if (next > now) return next;
  return at + (Math.floor((now - at) / everyMs) + 1) * everyMs;
};

/** The record id of one occurrence: the same on every node, so an occurrence can be recorded once only. */
export const occurrenceRecordId = (timerId: string, at: Date): string => {
  const hex = createHash('sha256').update(`${timerId}@${at.toISOString()}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

export interface Occurrence {
  timer: RecurringTimer;
  payload: RecurringPayload;
  /** when the occurrence was due */
  at: Date;
  /** the context to send it in: its record takes the occurrence's id, so a repeat finds it and sends nothing */
  ctx: RequestContext;
  /**
   * Gives the occurrence back unsent: for the new owner when this node lost the session meanwhile, or to
   * try again here at `retryAt` while the session re-links.
   */
  giveBack: (retryAt?: Date) => Promise<void>;
}

/**
 * A recurring timer's job fired here: claims its due occurrence in the database, or arms the timer again
 * for when it is due. Only the session's owner, under the epoch of its claim, takes an occurrence; the
 * claim moves `nextAt` on from the value read (a conditional update), so of two nodes that both fire
 * it one takes the occurrence. The next occurrence is armed before this one is sent.
 */
export const claimOccurrence = async (deps: Deps, timerId: string): Promise<Occurrence | null> => {
  const timer = await deps.db.recurringTimer.findUnique({ where: { id: timerId } });
  if (!timer || timer.cancelledAt) return null;
  const now = deps.now().getTime();
  if (timer.nextAt.getTime() > now) {
    // Fired early, or another node took the occurrence: armed again for the next one.
    await deps.jobs.armRecurring(timer.id, timer.sessionId, timer.nextAt);
    return null;
  }
  // The new owner arms it when it takes the session.
  if (!(await deps.sessions.stillOwns(timer.sessionId))) return null;
  const everyMs = Number(timer.everyMs);
  const next = new Date(nextAfter(timer.nextAt.getTime(), everyMs, now));
  const claimed = await deps.db.recurringTimer.updateMany({
    where: { id: timer.id, nextAt: timer.nextAt, cancelledAt: null },
    data: { nextAt: next },
  });
  if (claimed.count === 0) {
    const current = await deps.db.recurringTimer.findUnique({ where: { id: timer.id }, select: { nextAt: true, cancelledAt: true } });
    if (current && !current.cancelledAt) await deps.jobs.armRecurring(timer.id, timer.sessionId, current.nextAt);
    return null;
  }
  await deps.jobs.armRecurring(timer.id, timer.sessionId, next);
  const recordId = occurrenceRecordId(timer.id, timer.nextAt);
  const ctx: RequestContext = {
    ...jobContext(deps, timer.accountId),
    idempotency: { admit: async () => {}, nextRecordId: () => recordId, resumed: () => true },
  };
  return {
    timer,
    payload: payloadOf(timer),
    at: timer.nextAt,
    ctx,
    giveBack: async (retryAt) => {
      const back = await deps.db.recurringTimer.updateMany({
        where: { id: timer.id, nextAt: next, cancelledAt: null },
        data: { nextAt: timer.nextAt },
      });
      if (back.count === 0) return;
      if (retryAt) await deps.jobs.armRecurring(timer.id, timer.sessionId, retryAt);
      else await deps.jobs.disarmRecurring(timer.id);
    },
  };
};

/**
 * At start, and when this node takes sessions: the live timers of its sessions are armed at their next
 * occurrence (one already due fires at once).
 */
export const resumeRecurring = async (deps: Deps, sessionIds?: string[]): Promise<number> => {
  const timers = await deps.db.recurringTimer.findMany({
    where: { cancelledAt: null, ...(sessionIds ? { sessionId: { in: sessionIds } } : {}) },
    select: { id: true, sessionId: true, nextAt: true },
  });
  for (const timer of timers) await deps.jobs.armRecurring(timer.id, timer.sessionId, timer.nextAt);
  return timers.length;
};
