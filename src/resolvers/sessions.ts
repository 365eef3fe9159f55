import { z } from 'zod';
import type { Prisma, Session } from '../generated/sqlite/client.ts';
import type { SessionEvent } from '../runtime/ports/events.ts';
import type { SessionStatus } from '../runtime/ports/sessions.ts';
import type { RequestContext } from './context.ts';
import { DomainError, notFound } from './errors.ts';
import { integerInput } from './paging.ts';
import { perDatabase } from './per-database.ts';
import { parseInput } from './validate.ts';

export const MANUAL_DISCONNECT = 'Disconnected manually';

export interface SessionView {
  id: string;
  sessionName: string;
  status: SessionStatus;
  qrCode: string | null;
  phone: string | null;
  lastError: string | null;
  lastSeen: string | null;
}

/** The row, overlaid with the live link's status and QR (the row lags behind the link by design). */
export const sessionView = (ctx: Pick<RequestContext, 'sessions'>, row: Session, live = ctx.sessions.view(row.id)): SessionView => {
  return {
    id: row.id,
    sessionName: row.sessionName,
    status: live?.status ?? (row.status as SessionStatus),
    qrCode: live?.qrCode ?? null,
    phone: row.phone,
    lastError: row.lastError,
    lastSeen: row.lastSeen ? row.lastSeen.toISOString() : null,
  };
};

export const nameSchema = z.object({ name: z.string().trim().min(1, 'is required').max(100) });
export const renameSchema = z.object({ sessionName: z.string().trim().min(1, 'is required').max(100) });
/** Every status a session can have; the GraphQL enum SessionStatus is made from it. */
export const sessionStatusSchema = z.enum(['DISCONNECTED', 'CONNECTING', 'QR_READY', 'CONNECTED', 'PAUSED'], {
  message: 'must be one of DISCONNECTED, CONNECTING, QR_READY, CONNECTED, PAUSED',
});
/** The statuses a client may set (SettableSessionStatus in GraphQL). */
export const settableStatusSchema = sessionStatusSchema.exclude(['QR_READY'], {
  message: 'must be one of CONNECTED, DISCONNECTED, CONNECTING, PAUSED (QR_READY cannot be set)',
});
export const statusSchema = z.object({ status: settableStatusSchema });
export const pairingSchema = z.object({
  phoneNumber: z.string().regex(/^\d{6,15}$/, 'must be 6 to 15 digits, with no + and no spaces'),
});
export const sessionIdSchema = z.object({ sessionId: z.string().min(1, 'is required') });
const WAIT_MAX_MS = 30_000;
const waitMsSchema = integerInput(0)
  .default(0)
  .transform((n) => Math.min(n, WAIT_MAX_MS));
export const qrWaitSchema = z.object({ waitMs: waitMsSchema });
export const statusWaitSchema = z.object({
  waitMs: waitMsSchema,
  waitFor: sessionStatusSchema.optional(),
});

/** The session if it belongs to the caller; another account's id is indistinguishable from a missing one. */
export const ownSession = async (ctx: RequestContext, sessionId: string): Promise<Session> => {
  const row = await ctx.db.session.findFirst({ where: { id: sessionId, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Session');
  return row;
};

// A session never changes account, so its owner is remembered once read; sends skip a query per
// message. Deleting forgets it.
const ownersOf = perDatabase<string>();

/** Like ownSession when only the id is needed, answered from memory after the first time. */
export const ownSessionId = async (ctx: RequestContext, sessionId: string): Promise<Pick<Session, 'id'>> => {
  const owners = ownersOf(ctx.db);
  let owner = owners.get(sessionId);
  if (owner === undefined) {
    const row = await ctx.db.session.findUnique({ where: { id: sessionId }, select: { accountId: true } });
    if (!row) throw notFound('Session');
    owner = row.accountId;
    owners.set(sessionId, owner);
  }
  if (owner !== ctx.caller.accountId) throw notFound('Session');
  return { id: sessionId };
};

/**
 * The live state first, then the row once that state's write has landed: the row is never older than
 * the status laid over it, so CONNECTED always comes with its phone.
 */
const reread = async (ctx: RequestContext, sessionId: string): Promise<SessionView> => {
  const live = ctx.sessions.view(sessionId);
  await ctx.sessions.settled(sessionId);
  return sessionView(ctx, await ownSession(ctx, sessionId), live);
};

export const sessionIdFrom = (input: unknown): string => parseInput(sessionIdSchema, input).sessionId;

export const listSessions = async (ctx: RequestContext): Promise<SessionView[]> => {
  await ctx.sessions.settled();
  const rows = await ctx.db.session.findMany({
    where: { accountId: ctx.caller.accountId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((row) => sessionView(ctx, row));
};

type SessionQuery = Pick<Prisma.SessionFindManyArgs, 'include' | 'select' | 'cursor' | 'take' | 'skip'>;

/** Sessions oldest first, as REST lists them; a connection's cursor pages through this order. */
export const SESSION_ORDER = [{ createdAt: 'asc' }, { id: 'asc' }] satisfies Prisma.SessionOrderByWithRelationInput[];

/**
 * The rows of the caller's sessions for GraphQL, with plugin-prisma's `query` (its selection and page).
 * Pending link and record writes land first, so a row and its messages are not older than the live state.
 */
export const listSessionRows = async (ctx: RequestContext, query: SessionQuery = {}): Promise<Session[]> => {
  await Promise.all([ctx.sessions.settled(), ctx.outgoing.settled()]);
  return ctx.db.session.findMany({ ...query, where: { accountId: ctx.caller.accountId }, orderBy: SESSION_ORDER });
};

export const countSessions = (ctx: RequestContext): Promise<number> => ctx.db.session.count({ where: { accountId: ctx.caller.accountId } });

/** One session's row for GraphQL, with plugin-prisma's `query`; another account's id is NOT_FOUND. */
export const getSessionRow = async (
  ctx: RequestContext,
  sessionId: string,
  query: Pick<Prisma.SessionFindFirstArgs, 'include' | 'select'> = {},
): Promise<Session> => {
  await Promise.all([ctx.sessions.settled(sessionId), ctx.outgoing.settled()]);
  const row = await ctx.db.session.findFirst({ ...query, where: { id: sessionId, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Session');
  return row;
};

/** The link's state at the moment of an event, laid over the row the event is resolved with. */
interface LiveState {
  status: SessionStatus;
  qrCode: string | null;
}
const eventStates = new WeakMap<object, LiveState>();

/**
 * A session event as a row for GraphQL: the event's fields (the link may have moved on since), and the
 * relations plugin-prisma's `query` asks for, read with it.
 */
export const sessionEventRow = async (
  ctx: RequestContext,
  event: SessionEvent,
  query: Pick<Prisma.SessionFindUniqueArgs, 'include' | 'select'> = {},
): Promise<Session> => {
  const stored = await ctx.db.session.findUnique({ ...query, where: { id: event.id } });
  const { qrCode: _qrCode, ...fields } = event;
  const row: Session = { ...stored, ...fields };
  eventStates.set(row, { status: event.status as SessionStatus, qrCode: event.qrCode });
  return row;
};

/** The status shown for a row: the event's, else the live link's, else the row's (it lags behind the link by design). */
export const statusOf = (ctx: Pick<RequestContext, 'sessions'>, row: Pick<Session, 'id' | 'status'>): SessionStatus =>
  eventStates.get(row)?.status ?? ctx.sessions.view(row.id)?.status ?? (row.status as SessionStatus);

/** The QR code to scan while the status is QR_READY, else null. */
export const qrCodeOf = (ctx: Pick<RequestContext, 'sessions'>, row: Pick<Session, 'id'>): string | null => {
  const fromEvent = eventStates.get(row);
  return fromEvent ? fromEvent.qrCode : (ctx.sessions.view(row.id)?.qrCode ?? null);
};

export const createSession = async (ctx: RequestContext, input: unknown): Promise<SessionView> => {
  const { name } = parseInput(nameSchema, input);
  const cap = ctx.settings.MAX_SESSIONS_PER_ACCOUNT;
  if (cap > 0 && (await ctx.db.session.count({ where: { accountId: ctx.caller.accountId } })) >= cap) {
    throw new DomainError('CONFLICT', `This account already has the most sessions allowed (${cap}); delete one first`);
  }
  const row = await ctx.db.session.create({ data: { accountId: ctx.caller.accountId, sessionName: name } });
  return sessionView(ctx, row);
};

export const getSession = async (ctx: RequestContext, sessionId: string): Promise<SessionView> => reread(ctx, sessionId);

/**
 * Extension: rereads the session on each of its changes until `done` holds, waitMs pass or the caller
 * goes away, then answers what it has (so a timeout is an ordinary answer, not an error).
 */
const waitForSession = async (
  ctx: RequestContext,
  sessionId: string,
  waitMs: number,
  done: (view: SessionView) => boolean,
  signal?: AbortSignal,
): Promise<SessionView> => {
  let view = await reread(ctx, sessionId);
  if (done(view) || waitMs <= 0 || signal?.aborted) return view;
  const changes = ctx.events.subscribe('session', sessionId)[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  let stop: () => void = () => undefined;
  const stopped = new Promise<'stop'>((resolve) => {
    stop = () => resolve('stop');
    timer = setTimeout(stop, waitMs);
    signal?.addEventListener('abort', stop, { once: true });
  });
  try {
    // Subscribed before the second read, so a change between the first read and the subscription is not missed.
    let next = changes.next();
    view = await reread(ctx, sessionId);
    while (!done(view)) {
      if ((await Promise.race([next, stopped])) === 'stop') break;
      next = changes.next();
      view = await reread(ctx, sessionId);
    }
    return view;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
    await changes.return?.();
  }
};

/** GET status with the `waitFor`/`waitMs` extension: answers once the session has that status, or after waitMs. */
export const sessionStatus = async (ctx: RequestContext, sessionId: string, query: unknown, signal?: AbortSignal): Promise<SessionView> => {
  const { waitMs, waitFor } = parseInput(statusWaitSchema, query ?? {});
  if (!waitFor) return reread(ctx, sessionId);
  return waitForSession(ctx, sessionId, waitMs, (view) => view.status === waitFor, signal);
};

export const renameSession = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SessionView> => {
  const { sessionName } = parseInput(renameSchema, input);
  await ownSession(ctx, sessionId);
  const row = await ctx.db.session.update({ where: { id: sessionId }, data: { sessionName } });
  return sessionView(ctx, row);
};

export const deleteSession = async (ctx: RequestContext, sessionId: string): Promise<{ ok: true }> => {
  await ownSession(ctx, sessionId);
  try {
    await ctx.sessions.remove(sessionId);
  } catch (err) {
    ctx.logger.warn({ err, sessionId }, 'deleting a session: the device could not be removed from the phone');
    throw new DomainError(
      'NETWORK_ERROR',
      `The device could not be removed from the phone, so the session was kept: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  await ctx.jobs.disarmSession(sessionId);
  await ctx.db.session.delete({ where: { id: sessionId } });
  ownersOf(ctx.db).delete(sessionId);
  ctx.logger.info({ sessionId }, 'session deleted');
  return { ok: true };
};

export const connectSession = async (ctx: RequestContext, sessionId: string): Promise<SessionView> => {
  await ownSession(ctx, sessionId);
  await ctx.sessions.connect(sessionId);
  return reread(ctx, sessionId);
};

export const disconnectSession = async (ctx: RequestContext, sessionId: string): Promise<SessionView> => {
  await ownSession(ctx, sessionId);
  await ctx.sessions.stop(sessionId, 'DISCONNECTED', MANUAL_DISCONNECT);
  return reread(ctx, sessionId);
};

/** Manual override: CONNECTING and CONNECTED (re)start the link, DISCONNECTED and PAUSED close it. */
export const setSessionStatus = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SessionView> => {
  const { status } = parseInput(statusSchema, input);
  await ownSession(ctx, sessionId);
  if (status === 'PAUSED') await ctx.sessions.stop(sessionId, 'PAUSED');
  else if (status === 'DISCONNECTED') await ctx.sessions.stop(sessionId, 'DISCONNECTED', MANUAL_DISCONNECT);
  else await ctx.sessions.connect(sessionId);
  return reread(ctx, sessionId);
};

export interface QrCodeView {
  sessionId: string;
  status: SessionStatus;
  qrCode: string | null;
  hasQrCode: boolean;
}

/** With the `waitMs` extension, waits for a QR code to be shown (or for the link to connect, when there is none to show). */
export const sessionQrCode = async (
  ctx: RequestContext,
  sessionId: string,
  query: unknown = {},
  signal?: AbortSignal,
): Promise<QrCodeView> => {
  const { waitMs } = parseInput(qrWaitSchema, query ?? {});
  const view = await waitForSession(ctx, sessionId, waitMs, (v) => v.qrCode !== null || v.status === 'CONNECTED', signal);
  return { sessionId, status: view.status, qrCode: view.qrCode, hasQrCode: view.qrCode !== null };
};

export const requestPairingCode = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<{ pairingCode: string }> => {
  const { phoneNumber } = parseInput(pairingSchema, input);
  const session = await reread(ctx, sessionId);
  if (session.status === 'CONNECTED') throw new DomainError('CONFLICT', 'The session is already linked to a phone');
  try {
    return { pairingCode: await ctx.sessions.pairingCode(sessionId, phoneNumber) };
  } catch (err) {
    ctx.logger.warn({ err, sessionId }, 'pairing code request failed');
    throw new DomainError('NETWORK_ERROR', `The network did not issue a pairing code: ${err instanceof Error ? err.message : String(err)}`);
  }
};
