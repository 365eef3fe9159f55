import { createHash, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { Prisma } from '../generated/sqlite/client.ts';
import type { Chat } from '../generated/sqlite/client.ts';
import type { MessageUpdate } from '../runtime/ports/events.ts';
import type { IncomingItem, IncomingMediaView } from '../runtime/ports/incoming.ts';
import type { ChatEvent, HistoryChatState } from '../runtime/ports/network.ts';
import type { Deps, RequestContext } from './context.ts';
import { DomainError, notFound } from './errors.ts';
import { JID_MESSAGE, toJid } from './jids.ts';
import { limitSchema } from './paging.ts';
import { ownSessionId } from './sessions.ts';
import { parseInput } from './validate.ts';

/*
 * Reading the message store (issue 45, docs/conversations.md): a session's chats by last activity, a
 * chat's messages newest first, any stored message by our id or the network's. Pages are cut by opaque
 * cursors bound to the session and the query (a forged one, or one of another session or list, is a
 * 400). A page is a fixed number of queries whatever its size: its rows, then each relation in one batch.
 */

export const CHAT_KINDS = ['person', 'group', 'channel', 'status', 'broadcast'] as const;
export type ChatKind = (typeof CHAT_KINDS)[number];

export interface ReactionView {
  /** the reactor: phone-number JID when known, else LID JID */
  reactor: string;
  reactorLid: string | null;
  emoji: string;
  reactedAt: string;
}

export interface RecipientReceiptView {
  recipient: string;
  recipientLid: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  playedAt: string | null;
}

/** The receipts of a message this API sent: its record's status and first times, and per member in a group. */
export interface ReceiptsView {
  /** the outgoing record (GET /v1/sessions/{id}/messages/{messageId}) */
  messageId: string;
  status: string;
  deliveredAt: string | null;
  readAt: string | null;
  playedAt: string | null;
  recipients: RecipientReceiptView[];
}

export interface StoredMessageView {
  /** our id (for a message this API sent, its outgoing record's id) */
  id: string;
  waMessageId: string;
  direction: 'in' | 'out';
  chatId: string;
  chatLid: string | null;
  sender: string;
  senderLid: string | null;
  fromMe: boolean;
  kind: string;
  text: string | null;
  quotedId: string | null;
  /** the quoted message when the store holds it (its own `quoted` is left null) */
  quoted: StoredMessageView | null;
  mentions: string[];
  timestamp: string;
  editedText: string | null;
  editedAt: string | null;
  deletedAt: string | null;
  source: string;
  /** a received file while its record is kept (INCOMING_MEDIA_RETENTION_MS), as the incoming item shows it */
  media: IncomingMediaView | null;
  reactions: ReactionView[];
  /** for messages this API sent; null otherwise */
  receipts: ReceiptsView | null;
}

export interface ChatView {
  sessionId: string;
  /** the chat's JID: a person's phone-number JID where known (else LID), a group, a channel */
  id: string;
  lid: string | null;
  kind: ChatKind;
  /** the account's saved contact name, else the person's push name; a group's subject; null when none is known */
  name: string | null;
  lastMessage: StoredMessageView | null;
  lastActivity: string;
  unreadCount: number;
  lastReadAt: string | null;
  archived: boolean;
  pinned: boolean;
  muted: boolean;
}

/** A chat as GraphQL serves it: a view, or one whose name and latest message are read when asked for. */
export type ChatNode = Omit<ChatView, 'name' | 'lastMessage'> & {
  name: string | null | Promise<string | null>;
  lastMessage: StoredMessageView | null | Promise<StoredMessageView | null>;
};

export interface ChatsPage {
  chats: ChatView[];
  nextCursor: string | null;
}

export interface MessagesPage {
  messages: StoredMessageView[];
  nextCursor: string | null;
}

/**
 * A page with the cursor after each of its items (GraphQL's edges), made when asked for: a cursor is an
 * HMAC, and a REST page shows only the last.
 */
type WithCursors<P> = P & { cursorAt: (index: number) => string };

/** Each item's cursor, made once when first asked for. */
const lazyCursors = <T>(items: T[], make: (item: T) => string): ((index: number) => string) => {
  const made = new Map<number, string>();
  return (index) => {
    let cursor = made.get(index);
    const item = items[index];
    if (cursor === undefined && item !== undefined) {
      cursor = make(item);
      made.set(index, cursor);
    }
    return cursor ?? '';
  };
};

type CursorDeps = Pick<Deps, 'settings'>;

/* ---------------------------------------------------------------- cursors */

/**
 * The key a cursor's MAC is made with: the cluster's secret when there is one, else the database URL
 * (every node of a deployment shares it; it outlives restarts), so a cursor works on any node and later.
 */
const cursorKeys = new WeakMap<CursorDeps['settings'], KeyObject>();
const cursorKey = (deps: CursorDeps): KeyObject => {
  let key = cursorKeys.get(deps.settings);
  if (!key) {
    key = createSecretKey(
      createHash('sha256')
        .update(`conversation-cursor\0${deps.settings.CLUSTER_SECRET ?? deps.settings.DATABASE_URL}`)
        .digest(),
    );
    cursorKeys.set(deps.settings, key);
  }
  return key;
};

interface CursorBody {
  /** the session */
  s: string;
  /** the list and its filters */
  q: string;
  /** where the page ended: sort time (ms) and tie-breaker */
  k: [number, string];
}

const badCursor = (path: string, message: string): DomainError =>
  new DomainError('VALIDATION_FAILED', 'Invalid cursor', { details: [{ path, message }] });

const mac = (deps: CursorDeps, payload: string): string => createHmac('sha256', cursorKey(deps)).update(payload).digest('base64url');

export const encodeCursor = (deps: CursorDeps, sessionId: string, query: string, key: [number, string]): string => {
  const payload = Buffer.from(JSON.stringify({ s: sessionId, q: query, k: key } satisfies CursorBody)).toString('base64url');
  return `${payload}.${mac(deps, payload)}`;
};

/** A cursor's body, once it is shown to be one this API gave, for this session. */
export const readCursor = (deps: CursorDeps, sessionId: string, cursor: string, path = 'cursor'): CursorBody => {
  const [payload, signature, extra] = cursor.split('.');
  if (!payload || !signature || extra !== undefined) throw badCursor(path, 'not a cursor this API gave');
  const expected = Buffer.from(mac(deps, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw badCursor(path, 'not a cursor this API gave');
  const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorBody;
  if (body.s !== sessionId) throw badCursor(path, "a cursor of another session's list");
  return body;
};

/** Where the page of a cursor ended, when it was given for this same list and filters. */
export const cursorKeyFor = (body: CursorBody, query: string, path = 'cursor'): [number, string] => {
  if (body.q !== query) throw badCursor(path, 'a cursor of another list or other filters: page with the filters it was given for');
  return body.k;
};

/* ---------------------------------------------------------------- inputs */

const booleanQuery = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')], {
  error: 'must be true or false',
});

const cursorInput = z.string().trim().min(1, 'must not be empty').max(2048);

export const chatsQuerySchema = z.strictObject({
  limit: limitSchema,
  cursor: cursorInput.optional(),
  unread: booleanQuery.optional().describe('true: only chats with unread messages; false: only those without'),
  archived: booleanQuery.optional().describe('true: only archived chats; false: only those not archived'),
  kind: z.enum(CHAT_KINDS, { message: `must be one of ${CHAT_KINDS.join(', ')}` }).optional(),
});

const isoDate = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

export const chatMessagesQuerySchema = z.strictObject({
  limit: limitSchema,
  cursor: cursorInput.optional(),
  before: isoDate.optional().describe('only messages older than this time'),
  after: isoDate.optional().describe('only messages newer than this time'),
});

/** A chat named in a path: digits (a person), or any JID a chat can have (person, LID, group, channel, status, list). */
export const storedChatJid = (value: string, path = 'chatId'): string => {
  const jid = toJid(value.trim());
  if (!jid) throw new DomainError('VALIDATION_FAILED', 'Invalid chat id', { details: [{ path, message: JID_MESSAGE }] });
  return jid;
};

const messageIdSchema = z.string().trim().min(1, 'must not be empty').max(128, 'must be at most 128 characters');

/* ---------------------------------------------------------------- views */

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/**
 * What a message's view reads: not the network key nor the quotable copy (the largest columns, which only
 * a quote or a reaction sent by the API reads), and of its relations only what is shown.
 */
const MESSAGE_SELECT = {
  id: true,
  waMessageId: true,
  direction: true,
  chatId: true,
  chatLid: true,
  sender: true,
  senderLid: true,
  fromMe: true,
  kind: true,
  text: true,
  quotedId: true,
  mentions: true,
  messageTimestamp: true,
  editedText: true,
  editedAt: true,
  deletedAt: true,
  source: true,
  reactions: {
    select: { reactor: true, reactorLid: true, emoji: true, reactedAt: true },
    orderBy: [{ reactedAt: 'asc' }, { reactorKey: 'asc' }],
  },
  outgoing: {
    select: {
      id: true,
      status: true,
      deliveredAt: true,
      readAt: true,
      playedAt: true,
      receipts: {
        select: { recipient: true, recipientLid: true, deliveredAt: true, readAt: true, playedAt: true },
        orderBy: { recipient: 'asc' },
      },
    },
  },
} as const satisfies Prisma.MessageSelect;

type MessageRow = Prisma.MessageGetPayload<{ select: typeof MESSAGE_SELECT }>;

const mentionsOf = (json: string): string[] => {
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
};

const receiptsOf = (outgoing: MessageRow['outgoing']): ReceiptsView | null =>
  outgoing && {
    messageId: outgoing.id,
    status: outgoing.status,
    deliveredAt: iso(outgoing.deliveredAt),
    readAt: iso(outgoing.readAt),
    playedAt: iso(outgoing.playedAt),
    recipients: outgoing.receipts.map((r) => ({
      recipient: r.recipient,
      recipientLid: r.recipientLid,
      deliveredAt: iso(r.deliveredAt),
      readAt: iso(r.readAt),
      playedAt: iso(r.playedAt),
    })),
  };

/**
 * Views of stored message rows, with what each relation needs loaded in one query per relation for the
 * whole batch: the quoted messages, the files' records (a join on the network id: those records are purged
 * on their own schedule), reactions and receipts (included with the rows).
 */
const messageViews = async (
  ctx: Pick<Deps, 'db' | 'incomingMedia'>,
  sessionId: string,
  rows: MessageRow[],
): Promise<StoredMessageView[]> => {
  const quotedIds = [...new Set(rows.map((m) => m.quotedId).filter((id): id is string => id !== null))];
  // The files are those of the rows and of the messages they quote, known by network id: both read at once.
  const withFiles = [...new Set([...rows.map((m) => m.waMessageId), ...quotedIds])];
  const [quotedRows, files] = await Promise.all([
    quotedIds.length === 0 ? [] : ctx.db.message.findMany({ where: { sessionId, waMessageId: { in: quotedIds } }, select: MESSAGE_SELECT }),
    withFiles.length === 0
      ? []
      : ctx.db.incomingMedia.findMany({
          where: { sessionId, messageId: { in: withFiles } },
          select: { messageId: true, mimetype: true, size: true, fileName: true },
        }),
  ]);
  const mediaOf = new Map(
    files.map((f) => [
      f.messageId,
      { mimetype: f.mimetype, size: Number(f.size), fileName: f.fileName, url: ctx.incomingMedia.url(sessionId, f.messageId) },
    ]),
  );
  const view = (m: MessageRow, quoted: StoredMessageView | null): StoredMessageView => ({
    id: m.id,
    waMessageId: m.waMessageId,
    direction: m.direction === 'out' ? 'out' : 'in',
    chatId: m.chatId,
    chatLid: m.chatLid,
    sender: m.sender,
    senderLid: m.senderLid,
    fromMe: m.fromMe,
    kind: m.kind,
    text: m.text,
    quotedId: m.quotedId,
    quoted,
    mentions: mentionsOf(m.mentions),
    timestamp: m.messageTimestamp.toISOString(),
    editedText: m.editedText,
    editedAt: iso(m.editedAt),
    deletedAt: iso(m.deletedAt),
    source: m.source,
    media: mediaOf.get(m.waMessageId) ?? null,
    reactions: m.reactions.map((r) => ({
      reactor: r.reactor,
      reactorLid: r.reactorLid,
      emoji: r.emoji,
      reactedAt: r.reactedAt.toISOString(),
    })),
    receipts: receiptsOf(m.outgoing),
  });
  const quotedViews = new Map(quotedRows.map((q) => [q.waMessageId, view(q, null)]));
  return rows.map((m) => view(m, m.quotedId ? (quotedViews.get(m.quotedId) ?? null) : null));
};

/** Chat rows as views: their latest messages and the account's saved names in one query each. */
const chatViews = async (ctx: RequestContext, sessionId: string, rows: Chat[]): Promise<ChatView[]> => {
  if (rows.length === 0) return [];
  const [latest, contacts] = await Promise.all([
    ctx.db.message.findMany({
      where: { sessionId, waMessageId: { in: rows.map((c) => c.lastMessageId) } },
      select: MESSAGE_SELECT,
    }),
    ctx.db.contact.findMany({
      where: {
        accountId: ctx.caller.accountId,
        OR: [
          { jid: { in: rows.map((c) => c.chatId) } },
          { lid: { in: rows.map((c) => c.chatLid).filter((l): l is string => l !== null) } },
        ],
      },
      select: { jid: true, lid: true, name: true },
    }),
  ]);
  const messages = new Map((await messageViews(ctx, sessionId, latest)).map((m) => [m.waMessageId, m]));
  const saved = new Map<string, string>();
  for (const c of contacts) {
    if (c.name === '') continue;
    saved.set(c.jid, c.name);
    if (c.lid) saved.set(c.lid, c.name);
  }
  return rows.map((c) => ({
    ...rowFields(sessionId, c),
    name: saved.get(c.chatId) ?? (c.chatLid ? saved.get(c.chatLid) : undefined) ?? c.name,
    lastMessage: messages.get(c.lastMessageId) ?? null,
  }));
};

/** What a chat's view takes from its row alone. */
const rowFields = (sessionId: string, c: Chat): Omit<ChatView, 'name' | 'lastMessage'> => ({
  sessionId,
  id: c.chatId,
  lid: c.chatLid,
  kind: (CHAT_KINDS as readonly string[]).includes(c.kind) ? (c.kind as ChatKind) : 'person',
  lastActivity: c.lastMessageAt.toISOString(),
  unreadCount: c.unreadCount,
  lastReadAt: iso(c.lastReadAt),
  archived: c.archived,
  pinned: c.pinned,
  muted: c.muted,
});

/* ---------------------------------------------------------------- chats */

export interface ChatFilters {
  unread?: boolean;
  archived?: boolean;
  kind?: ChatKind;
}

/**
 * One condition of a list's filters. A list's page reads through Prisma and its count in one raw
 * statement (countOf), so each filter is written once, here, and both forms are made from it.
 */
interface Condition<C extends string> {
  column: C;
  op: '=' | '>' | '<';
  value: string | number | boolean | Date;
}

/** The conditions as a Prisma filter: equality as the value, bounds on one column together. */
const whereOf = <W extends object>(conditions: Condition<keyof W & string>[]): W => {
  const where: Record<string, unknown> = {};
  for (const { column, op, value } of conditions) {
    where[column] = op === '=' ? value : { ...(where[column] as object | undefined), [op === '>' ? 'gt' : 'lt']: value };
  }
  // Each column is one of W's and each value of its column's type (the conditions' builders below).
  return where as W;
};

/** The conditions as SQL, for countOf. */
const sqlOf = <C extends string>(conditions: Condition<C>[]): Prisma.Sql[] =>
  conditions.map(({ column, op, value }) => Prisma.sql`${Prisma.raw(`"${column}" ${op}`)} ${value}`);

const chatConditions = (sessionId: string, filters: ChatFilters): Condition<keyof Prisma.ChatWhereInput & string>[] => [
  { column: 'sessionId', op: '=', value: sessionId },
  ...(filters.unread === undefined ? [] : [{ column: 'unreadCount', op: filters.unread ? '>' : '=', value: 0 } as const]),
  ...(filters.archived === undefined ? [] : [{ column: 'archived', op: '=', value: filters.archived } as const]),
  ...(filters.kind === undefined ? [] : [{ column: 'kind', op: '=', value: filters.kind } as const]),
];

const chatWhere = (sessionId: string, filters: ChatFilters): Prisma.ChatWhereInput =>
  whereOf<Prisma.ChatWhereInput>(chatConditions(sessionId, filters));

const chatsQueryKey = (filters: ChatFilters): string => `chats:${filters.unread ?? ''}:${filters.archived ?? ''}:${filters.kind ?? ''}`;

/** A page of the session's chats, latest activity first (then by chat id), after the cursor's chat. */
export const chatsPage = async (
  ctx: RequestContext,
  sessionId: string,
  filters: ChatFilters,
  page: { limit: number; cursor?: string; cursorPath?: string },
): Promise<WithCursors<ChatsPage>> => {
  const query = chatsQueryKey(filters);
  const after =
    page.cursor === undefined ? null : cursorKeyFor(readCursor(ctx, sessionId, page.cursor, page.cursorPath), query, page.cursorPath);
  await ownSessionId(ctx, sessionId);
  const where = chatWhere(sessionId, filters);
  const rows = await ctx.db.chat.findMany({
    where: after
      ? {
          ...where,
          // The bound the OR implies, on its own: SQLite walks the index from the cursor (as for a chat's messages below).
          lastMessageAt: { lte: new Date(after[0]) },
          OR: [{ lastMessageAt: { lt: new Date(after[0]) } }, { lastMessageAt: new Date(after[0]), chatId: { lt: after[1] } }],
        }
      : where,
    orderBy: [{ lastMessageAt: 'desc' }, { chatId: 'desc' }],
    take: page.limit + 1,
  });
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const cursorAt = lazyCursors(shown, (c) => encodeCursor(ctx, sessionId, query, [c.lastMessageAt.getTime(), c.chatId]));
  return { chats: await chatViews(ctx, sessionId, shown), nextCursor: more ? cursorAt(shown.length - 1) : null, cursorAt };
};

/**
 * How many rows of a table match: one COUNT over the index its first condition leads (Prisma's count
 * wraps the matching rows in a subquery first: 2.5 ms against 1.7 for 10,000 chats on SQLite).
 */
const countOf = async (ctx: Pick<Deps, 'db'>, table: 'Chat' | 'Message', conditions: Prisma.Sql[]): Promise<number> => {
  const [row] = await ctx.db.$queryRaw<Array<{ n: bigint | number }>>`SELECT COUNT(*) AS "n" FROM ${Prisma.raw(`"${table}"`)}
    WHERE ${Prisma.join(conditions, ' AND ')}`;
  return Number(row?.n ?? 0);
};

export const countChats = async (ctx: RequestContext, sessionId: string, filters: ChatFilters): Promise<number> => {
  await ownSessionId(ctx, sessionId);
  return countOf(ctx, 'Chat', sqlOf(chatConditions(sessionId, filters)));
};

/** GET /v1/sessions/{id}/chats */
export const listChats = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<ChatsPage> => {
  const { limit, cursor, ...filters } = parseInput(chatsQuerySchema, input ?? {});
  const { chats, nextCursor } = await chatsPage(ctx, sessionId, filters, { limit, cursor });
  return { chats, nextCursor };
};

const findChat = async (ctx: RequestContext, sessionId: string, chatId: string): Promise<Chat> => {
  const row = await ctx.db.chat.findFirst({ where: { sessionId, OR: [{ chatId }, { chatLid: chatId }] } });
  if (!row) throw notFound('Chat');
  return row;
};

/**
 * One chat of the session, by its JID (or LID, or digits): its row's fields at once, its name and latest
 * message read only when asked for, as a thread's page asks for neither (those reads were most of the
 * difference between GraphQL's thread page and REST's).
 */
export const getChat = async (ctx: RequestContext, sessionId: string, chatIdParam: string): Promise<ChatNode> => {
  const chatId = storedChatJid(chatIdParam);
  await ownSessionId(ctx, sessionId);
  const row = await findChat(ctx, sessionId, chatId);
  let full: Promise<ChatView> | undefined;
  const view = () => (full ??= chatViews(ctx, sessionId, [row]).then(([v]) => v as ChatView));
  return {
    ...rowFields(sessionId, row),
    get name() {
      return view().then((v) => v.name);
    },
    get lastMessage() {
      return view().then((v) => v.lastMessage);
    },
  };
};

/** A chat's current view, or null when the store has no such chat (for subscriptions). */
export const chatViewOf = async (ctx: RequestContext, sessionId: string, chatId: string): Promise<ChatView | null> => {
  const row = await ctx.db.chat.findFirst({ where: { sessionId, OR: [{ chatId }, { chatLid: chatId }] } });
  if (!row) return null;
  return (await chatViews(ctx, sessionId, [row]))[0] ?? null;
};

/* ---------------------------------------------------------------- a chat's messages */

export interface MessageFilters {
  before?: Date;
  after?: Date;
}

const messagesQueryKey = (chatId: string, filters: MessageFilters): string =>
  `messages:${chatId}:${filters.before?.getTime() ?? ''}:${filters.after?.getTime() ?? ''}`;

const messageConditions = (
  sessionId: string,
  chatId: string,
  filters: MessageFilters,
): Condition<keyof Prisma.MessageWhereInput & string>[] => [
  { column: 'sessionId', op: '=', value: sessionId },
  { column: 'chatId', op: '=', value: chatId },
  ...(filters.before ? [{ column: 'messageTimestamp', op: '<', value: filters.before } as const] : []),
  ...(filters.after ? [{ column: 'messageTimestamp', op: '>', value: filters.after } as const] : []),
];

const messagesWhere = (sessionId: string, chatId: string, filters: MessageFilters): Prisma.MessageWhereInput =>
  whereOf<Prisma.MessageWhereInput>(messageConditions(sessionId, chatId, filters));

/** How many messages of a chat match the filters (a connection's totalCount, the same on every page). */
export const countChatMessages = (ctx: RequestContext, sessionId: string, chatId: string, filters: MessageFilters): Promise<number> =>
  countOf(ctx, 'Message', sqlOf(messageConditions(sessionId, chatId, filters)));

/** A page of a chat's messages, both directions, newest first (then by our id), after the cursor's message. */
export const messagesPage = async (
  ctx: RequestContext,
  sessionId: string,
  chatId: string,
  filters: MessageFilters,
  page: { limit: number; cursor?: string; cursorPath?: string },
): Promise<WithCursors<MessagesPage>> => {
  const query = messagesQueryKey(chatId, filters);
  const from =
    page.cursor === undefined ? null : cursorKeyFor(readCursor(ctx, sessionId, page.cursor, page.cursorPath), query, page.cursorPath);
  const where = messagesWhere(sessionId, chatId, filters);
  const rows = await ctx.db.message.findMany({
    where: from
      ? {
          AND: [
            where,
            // The bound the OR implies, on its own: SQLite (libsql's 3.45) then walks the chat's index from
            // the cursor, where the OR alone made it read and sort every older message of the chat for each
            // page (1 s at 10,000 deep in a chat of 100,000; docs/benchmarks.md, The message store).
            { messageTimestamp: { lte: new Date(from[0]) } },
            { OR: [{ messageTimestamp: { lt: new Date(from[0]) } }, { messageTimestamp: new Date(from[0]), id: { lt: from[1] } }] },
          ],
        }
      : where,
    orderBy: [{ messageTimestamp: 'desc' }, { id: 'desc' }],
    take: page.limit + 1,
    select: MESSAGE_SELECT,
  });
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const cursorAt = lazyCursors(shown, (m) => encodeCursor(ctx, sessionId, query, [m.messageTimestamp.getTime(), m.id]));
  return { messages: await messageViews(ctx, sessionId, shown), nextCursor: more ? cursorAt(shown.length - 1) : null, cursorAt };
};

/** GET /v1/sessions/{id}/chats/{chatId}/messages */
export const listChatMessages = async (
  ctx: RequestContext,
  sessionId: string,
  chatIdParam: string,
  input: unknown,
): Promise<MessagesPage> => {
  const chatId = storedChatJid(chatIdParam);
  const { limit, cursor, before, after } = parseInput(chatMessagesQuerySchema, input ?? {});
  const filters = { ...(before ? { before: new Date(before) } : {}), ...(after ? { after: new Date(after) } : {}) };
  // a forged cursor, or another session's, is a 400 before the session or the chat is looked for
  if (cursor !== undefined) readCursor(ctx, sessionId, cursor);
  await ownSessionId(ctx, sessionId);
  const chat = await findChat(ctx, sessionId, chatId);
  const { messages, nextCursor } = await messagesPage(ctx, sessionId, chat.chatId, filters, { limit, cursor });
  return { messages, nextCursor };
};

/* ---------------------------------------------------------------- one message */

/** Any stored message of the session, in or out, by our id or by the network's id. */
export const getStoredMessage = async (ctx: RequestContext, sessionId: string, messageIdParam: string): Promise<StoredMessageView> => {
  const id = parseInput(messageIdSchema, messageIdParam, ['messageId']);
  await ownSessionId(ctx, sessionId);
  const row = await ctx.db.message.findFirst({ where: { sessionId, OR: [{ id }, { waMessageId: id }] }, select: MESSAGE_SELECT });
  if (!row) throw notFound('Message');
  const [view] = await messageViews(ctx, sessionId, [row]);
  if (!view) throw notFound('Message');
  return view;
};

/** A stored message's current view by its network id, or null (for subscriptions). */
export const storedMessageViewOf = async (
  ctx: RequestContext,
  sessionId: string,
  waMessageId: string,
): Promise<StoredMessageView | null> => {
  const row = await ctx.db.message.findUnique({ where: { sessionId_waMessageId: { sessionId, waMessageId } }, select: MESSAGE_SELECT });
  if (!row) return null;
  return (await messageViews(ctx, sessionId, [row]))[0] ?? null;
};

/* ---------------------------------------------------------------- read marks */

/**
 * A chat read (through the API, or on another device of the account): nothing unread, the time kept.
 * Returns whether a stored chat changed.
 */
export const chatRead = async (deps: Pick<Deps, 'db' | 'events' | 'now'>, sessionId: string, chatId: string): Promise<boolean> =>
  chatStateChanged(deps, sessionId, { chatJid: chatId, chatLid: null, read: true });

/** The fields of a chat-state change that move a stored chat (ports/network.ts ChatEvent `chat-state`). */
export type ChatStateChange = Omit<Extract<ChatEvent, { kind: 'chat-state' }>, 'kind'>;

/** The archive, pin and mute a change sets, as a chat's columns: only those it names. */
const chatFlagsOf = ({ archived, pinned, muted }: HistoryChatState): { archived?: boolean; pinned?: boolean; muted?: boolean } => ({
  ...(archived !== undefined ? { archived } : {}),
  ...(pinned !== undefined ? { pinned } : {}),
  ...(muted !== undefined ? { muted } : {}),
});

/**
 * The account's own state of a chat, as it set it here or on another of its devices (docs/conversations.md,
 * Chats): archived, pinned, muted; read (nothing unread, the time kept); marked unread (one unread when
 * none was). The chat is found by its JID or its LID; each stored chat that changed is pushed to
 * chatUpdates. Returns whether one changed.
 */
export const chatStateChanged = async (
  deps: Pick<Deps, 'db' | 'events' | 'now'>,
  sessionId: string,
  change: ChatStateChange,
): Promise<boolean> => {
  const names = [change.chatJid, ...(change.chatLid ? [change.chatLid] : [])];
  const rows = await deps.db.chat.findMany({
    where: { sessionId, OR: [{ chatId: { in: names } }, { chatLid: { in: names } }] },
    select: { chatId: true },
  });
  if (rows.length === 0) return false;
  const where = { sessionId, chatId: { in: rows.map((r) => r.chatId) } };
  const flags = chatFlagsOf(change);
  const data = change.read ? { ...flags, unreadCount: 0, lastReadAt: deps.now() } : flags;
  let count = 0;
  if (Object.keys(data).length > 0) count += (await deps.db.chat.updateMany({ where, data })).count;
  if (change.markedUnread)
    count += (await deps.db.chat.updateMany({ where: { ...where, unreadCount: 0 }, data: { unreadCount: 1 } })).count;
  if (count === 0) return false;
  for (const { chatId } of rows) deps.events.publish('chatUpdates', sessionId, { sessionId, chatId });
  return true;
};

/**
 * The archive, pin and mute of a history chunk's chats (HistoryChunk `states`), once its messages are
 * stored: one update per distinct setting (a chunk's chats mostly share one) rather than two statements a
 * chat, each chat found by its JID or LID as chatStateChanged finds it; each stored chat it changes is
 * pushed to chatUpdates. Answers how many changed.
 */
export const chatStatesFromHistory = async (
  deps: Pick<Deps, 'db' | 'events'>,
  sessionId: string,
  states: HistoryChatState[],
): Promise<number> => {
  const settings = new Map<string, { data: ReturnType<typeof chatFlagsOf>; names: string[] }>();
  for (const state of states) {
    const { chatJid, chatLid } = state;
    const data = chatFlagsOf(state);
    const key = JSON.stringify(data);
    const setting = settings.get(key) ?? { data, names: [] };
    setting.names.push(chatJid, ...(chatLid ? [chatLid] : []));
    settings.set(key, setting);
  }
  let changed = 0;
  for (const { data, names } of settings.values()) {
    if (Object.keys(data).length === 0) continue;
    for (let i = 0; i < names.length; i += STATES_PER_STATEMENT) {
      const some = names.slice(i, i + STATES_PER_STATEMENT);
      const rows = await deps.db.chat.updateManyAndReturn({
        // only the chats it changes: a chunk names the same chats again and again, mostly as they are
        where: {
          sessionId,
          AND: [
            { OR: [{ chatId: { in: some } }, { chatLid: { in: some } }] },
            { OR: Object.entries(data).map(([flag, value]) => ({ [flag]: { not: value } })) },
          ],
        },
        data,
        select: { chatId: true },
      });
      for (const { chatId } of rows) deps.events.publish('chatUpdates', sessionId, { sessionId, chatId });
      changed += rows.length;
    }
  }
  return changed;
};

/**
 * Chat names (JIDs and LIDs) per statement of chatStatesFromHistory: two parameters each (the chat's JID
 * and its LID are looked up in the same list), within Prisma's limit of 999 on SQLite.
 */
const STATES_PER_STATEMENT = 400;

/* ---------------------------------------------------------------- subscriptions */

/** Received messages about another message: they change it, and store no row of their own. */
const REFERRING_TYPES = new Set(['reaction', 'edit', 'revoke', 'poll_vote']);

const CHANGE_OF = { 'message.reaction': 'reaction', 'message.edited': 'edited', 'message.deleted': 'deleted' } as const;

/**
 * A received message's changes in the store, pushed to the chatUpdates and storedMessageUpdates
 * subscriptions (which read the rows again, and drop what the store did not keep: a status, a chat an
 * ignore filter drops). A poll vote changes no stored message.
 */
export const announceStored = (deps: Pick<Deps, 'events'>, item: IncomingItem, update: MessageUpdate | null): void => {
  if (update) {
    deps.events.publish('storedMessages', item.sessionId, {
      sessionId: item.sessionId,
      chatId: update.target.chatId,
      waMessageId: update.target.waMessageId,
      change: CHANGE_OF[update.type],
    });
    return;
  }
  if (REFERRING_TYPES.has(item.type) || !item.waMessageId) return;
  deps.events.publish('storedMessages', item.sessionId, {
    sessionId: item.sessionId,
    chatId: item.chatId,
    waMessageId: item.waMessageId,
    change: 'stored',
  });
  deps.events.publish('chatUpdates', item.sessionId, { sessionId: item.sessionId, chatId: item.chatId });
};

/** A message this API sent, as its stored row names it. */
export interface SentRef {
  sessionId: string;
  /** the record's recipient (toNumber): the stored message's chat */
  chatId: string;
  waMessageId: string;
}

/** A sent message's row changed (stored, or a receipt): pushed to storedMessageUpdates. */
const announceSentChange = (deps: Pick<Deps, 'events'>, ref: SentRef, change: 'stored' | 'receipt'): void => {
  const { sessionId, chatId, waMessageId } = ref;
  deps.events.publish('storedMessages', sessionId, { sessionId, chatId, waMessageId, change });
};

/**
 * Messages this API sent, once their rows are stored (the SENT mark's transaction, or a scheduled send's
 * storeSent): each message, then each chat it moved, to the same subscriptions as a received one. A
 * message the store did not keep (a status, an account in specOnly mode) has no row and pushes nothing.
 */
export const announceSent = (deps: Pick<Deps, 'events'>, sent: SentRef[]): void => {
  const chats = new Map<string, SentRef>();
  for (const ref of sent) {
    announceSentChange(deps, ref, 'stored');
    chats.set(`${ref.sessionId}\u0000${ref.chatId}`, ref);
  }
  for (const { sessionId, chatId } of chats.values()) deps.events.publish('chatUpdates', sessionId, { sessionId, chatId });
};

/** Receipts changed these sent messages' first times or members' rows: their views change. */
export const announceReceipts = (deps: Pick<Deps, 'events'>, changed: SentRef[]): void => {
  for (const ref of changed) announceSentChange(deps, ref, 'receipt');
};
