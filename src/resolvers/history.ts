import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ChatEvent } from '../runtime/ports/network.ts';
import type { HistoryWrites, MessageKeyRef } from '../runtime/ports/incoming.ts';
import { chatJidFrom } from './chats.ts';
import { chatStatesFromHistory } from './conversations.ts';
import type { Deps, RequestContext } from './context.ts';
import { requireLink } from './delivery.ts';
import { DomainError } from './errors.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';

export type HistoryChunk = Extract<ChatEvent, { kind: 'history' }>;

/** The history.synced event's data (docs/events-and-webhooks.md). */
export interface HistorySynced {
  sessionId: string;
  syncType: HistoryChunk['syncType'];
  chunkOrder: number | null;
  progress: number | null;
  /** the fetchChatHistory request an on_demand chunk answers */
  requestId: string | null;
  chats: number;
  /** messages in the chunk within HISTORY_SYNC_DAYS */
  messages: number;
  /** of those, rows the store did not hold yet */
  stored: number;
  /** reactions, edits and deletes the chunk carries, applied to stored messages */
  changes: number;
  /** messages left out: older than HISTORY_SYNC_DAYS, or not messages (protocol messages, stubs) */
  skipped: number;
  /** push names in the chunk */
  names: number;
}

/**
 * One chunk of the phone's history sync: its messages into the store as history (no per-message events),
 * push names onto chats that have none, then one history.synced event for the chunk.
 */
export const storeHistory = (
  deps: HistoryDeps,
  accountOf: (sessionId: string) => Promise<string | null>,
  sessionId: string,
  chunk: HistoryChunk,
): Promise<HistorySynced> => {
  // A session's chunks are stored one after another, so their history.synced events come in the phone's order.
  const turn = (inTurn.get(sessionId) ?? Promise.resolve()).then(() => storeChunk(deps, accountOf, sessionId, chunk));
  const settled = turn.catch(() => undefined);
  inTurn.set(sessionId, settled);
  void settled.then(() => {
    if (inTurn.get(sessionId) === settled) inTurn.delete(sessionId);
  });
  return turn;
};

type HistoryDeps = Pick<Deps, 'webhooks' | 'logger' | 'db' | 'events'> & { messages: HistoryWrites };
const inTurn = new Map<string, Promise<unknown>>();

const storeChunk = async (
  deps: HistoryDeps,
  accountOf: (sessionId: string) => Promise<string | null>,
  sessionId: string,
  chunk: HistoryChunk,
): Promise<HistorySynced> => {
  const stored = await deps.messages.storeHistory(sessionId, chunk.messages);
  await deps.messages.applyHistoryChanges(sessionId, chunk.changes);
  await deps.messages.historyNames(sessionId, chunk.names);
  await chatStatesFromHistory(deps, sessionId, chunk.states);
  const data: HistorySynced = {
    sessionId,
    syncType: chunk.syncType,
    chunkOrder: chunk.chunkOrder,
    progress: chunk.progress,
    requestId: chunk.requestId,
    chats: chunk.chats,
    messages: chunk.messages.length,
    stored,
    changes: chunk.changes.length,
    skipped: chunk.skipped,
    names: chunk.names.length,
  };
  // A first link brings empty chunks (no chats, nothing stored): worth a line only when debugging.
  const empty = stored === 0 && data.changes === 0 && data.names === 0 && data.chats === 0;
  deps.logger[empty ? 'debug' : 'info']({ ...data }, 'history sync chunk stored');
  const accountId = await accountOf(sessionId);
  if (accountId) await deps.webhooks.emit({ accountId, sessionId, type: 'history.synced', data: { ...data } });
  await changeMarks(deps, sessionId, (marks) => {
    const at = marks.findIndex((m) => m.startsWith(`${markOf(chunk, null)} `));
    return at < 0 ? marks : marks.filter((_, i) => i !== at);
  });
  return data;
};

/**
 * This process, as the history marks name it (Session.historyPending): a mark another process left names
 * a chunk that its stop cut off after the network's receipt.
 */
const PROCESS_MARK = randomUUID();

type TakenChunk = Pick<HistoryChunk, 'syncType' | 'chunkOrder'>;

/** "<process> <syncType> <chunkOrder> <taken at>"; without the time, the prefix its stored chunk clears. */
const markOf = (chunk: TakenChunk, takenAt: Date | null): string =>
  [PROCESS_MARK, chunk.syncType, chunk.chunkOrder ?? '-', ...(takenAt ? [takenAt.toISOString()] : [])].join(' ');

/**
 * Changes a session's marks (one line each) by compare-and-set: a chunk is noted while the one before it
 * is being stored and cleared, and a node reporting them may race either. Answers the marks it found, with
 * the session's account (read in the same query, for the events that report them).
 */
const changeMarks = async (
  deps: Pick<Deps, 'db'>,
  sessionId: string,
  change: (marks: string[]) => string[],
): Promise<{ marks: string[]; accountId: string | null }> => {
  for (let attempt = 0; attempt < 10; attempt++) {
    const row = await deps.db.session.findUnique({ where: { id: sessionId }, select: { historyPending: true, accountId: true } });
    if (!row) return { marks: [], accountId: null };
    const marks = row.historyPending ? row.historyPending.split('\n') : [];
    const next = change(marks);
    if (next.length === marks.length && next.every((m, i) => m === marks[i])) return { marks, accountId: row.accountId };
    const written = await deps.db.session.updateMany({
      where: { id: sessionId, historyPending: row.historyPending },
      data: { historyPending: next.length > 0 ? next.join('\n') : null },
    });
    if (written.count > 0) return { marks, accountId: row.accountId };
  }
  throw new Error('the history marks of the session kept changing');
};

/**
 * A history notification the link took (receipted) and is about to download: noted on the session until
 * its chunk is stored (storeHistory clears it).
 */
export const noteHistoryTaken = async (deps: Pick<Deps, 'db' | 'now'>, sessionId: string, chunk: TakenChunk): Promise<void> => {
  const mark = markOf(chunk, deps.now());
  await changeMarks(deps, sessionId, (marks) => [...marks, mark]);
};

/** The history.interrupted event's data (docs/events-and-webhooks.md). */
export interface HistoryInterrupted {
  sessionId: string;
  syncType: string;
  chunkOrder: number | null;
  /** when the link took the chunk's notification (its receipt went to the network) */
  takenAt: string;
}

/**
 * When a session's link is up: a chunk an earlier process took and did not store (it stopped in between)
 * is reported once, by a warning and a history.interrupted event, and forgotten. The network does not
 * send it again; fetchChatHistory asks for a chat's older messages.
 */
export const reportInterruptedHistory = async (
  deps: Pick<Deps, 'db' | 'webhooks' | 'logger'>,
  sessionId: string,
): Promise<HistoryInterrupted[]> => {
  const earlier = (mark: string) => !mark.startsWith(`${PROCESS_MARK} `);
  // Taken out in one compare-and-set, so whichever node's link comes up first reports them, once.
  const taken = await changeMarks(deps, sessionId, (all) => all.filter((m) => !earlier(m)));
  const marks = taken.marks.filter(earlier);
  if (marks.length === 0) return [];
  const { accountId } = taken;
  const lost: HistoryInterrupted[] = [];
  for (const mark of marks) {
    const [, syncType = 'other', order = '-', takenAt = ''] = mark.split(' ');
    const data: HistoryInterrupted = { sessionId, syncType, chunkOrder: order === '-' ? null : Number(order), takenAt };
    deps.logger.warn(
      { ...data },
      'a history sync chunk was lost: the service stopped after the network had its receipt and before it was stored',
    );
    if (accountId) await deps.webhooks.emit({ accountId, sessionId, type: 'history.interrupted', data: { ...data } });
    lost.push(data);
  }
  return lost;
};

export const fetchHistorySchema = z.strictObject({
  count: z.number().int().min(1, 'must be 1 to 500').max(500, 'must be 1 to 500').default(50),
});

export interface FetchHistoryAnswer {
  ok: true;
  chatId: string;
  /** the request's network id: the history.synced event of syncType on_demand that answers it carries it as requestId */
  requestId: string;
  count: number;
  /** the oldest stored message of the chat, which the phone pages back from */
  before: string;
}

/**
 * Asks the phone for up to `count` messages of a chat older than the oldest the store holds (on-demand
 * history sync). The phone answers later: the messages are stored as history and announced by one
 * history.synced event (syncType on_demand). A chat with no stored message has nothing to page back from: 404.
 */
export const fetchChatHistory = async (
  ctx: RequestContext,
  sessionId: string,
  chatIdParam: string,
  input: unknown,
): Promise<FetchHistoryAnswer> => {
  const chatId = chatJidFrom(chatIdParam);
  const { count } = parseInput(fetchHistorySchema, input ?? {});
  const session = await ownSession(ctx, sessionId);
  const oldest = await ctx.db.message.findFirst({
    where: { sessionId: session.id, OR: [{ chatId }, { chatLid: chatId }] },
    orderBy: [{ messageTimestamp: 'asc' }, { id: 'asc' }],
    select: { waMessageId: true, key: true, messageTimestamp: true },
  });
  if (!oldest) throw new DomainError('NOT_FOUND', 'No stored message in this chat to page back from');
  const link = requireLink(ctx, session);
  const key = JSON.parse(oldest.key) as MessageKeyRef;
  let requestId: string;
  try {
    requestId = await link.chats.fetchHistory(count, { key, timestampMs: oldest.messageTimestamp.getTime() });
  } catch (err) {
    throw new DomainError(
      'NETWORK_ERROR',
      `The network refused to ask for the chat's history: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  ctx.logger.info({ sessionId, chatId, count, requestId }, 'older messages asked of the phone');
  return { ok: true, chatId, requestId, count, before: oldest.waMessageId };
};
