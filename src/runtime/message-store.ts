import type { Logger } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { Prisma } from '../generated/sqlite/client.ts';
import type { Db } from './db/client.ts';
import { groupCommit } from './db/group-commit.ts';
import type { GroupCommit } from './db/group-commit.ts';
import { jsonRows } from './db/json-rows.ts';
import type { JsonCell } from './db/json-rows.ts';
import type { Provider } from './db/migrate.ts';
import { rawWrites } from './db/raw-writes.ts';
import type { IncomingMediaStore } from './incoming-media.ts';
import type { IncomingInput, MessageKeyRef, ReceivedMessage } from './ports/incoming.ts';
import type { HistoryWrites, ReceivedMessages, RememberedMessage } from './ports/incoming.ts';
import { incomingInputOf } from './received-messages.ts';

export interface MessageStoreOptions {
  db: Db;
  provider: Provider;
  logger: Logger;
  now: () => Date;
  /** the received files' records: a file's row is written in the same transaction as its message */
  media: Pick<IncomingMediaStore, 'view' | 'insert'>;
  /** statuses (status@broadcast) and channels (@newsletter) are stored too (STORE_STATUSES_AND_CHANNELS) */
  statusesAndChannels: boolean;
  /** false when the session's account stores nothing beyond the spec's routes (messageStore specOnly): its file's record stays */
  keeps?: (sessionId: string) => Promise<boolean>;
}

/** A message's row (rowOf) as a batch write's JSON rows carry it. */
const MESSAGE_COLUMNS = [
  ['id', 'text'],
  ['sessionId', 'text'],
  ['waMessageId', 'text'],
  ['direction', 'text'],
  ['chatId', 'text'],
  ['chatLid', 'text'],
  ['sender', 'text'],
  ['senderLid', 'text'],
  ['fromMe', 'boolean'],
  ['kind', 'text'],
  ['text', 'text'],
  ['quotedId', 'text'],
  ['mentions', 'text'],
  ['key', 'text'],
  ['quotable', 'text'],
  ['messageTimestamp', 'timestamp'],
  ['createdAt', 'timestamp'],
  ['source', 'text'],
] as const;

/** A reaction's row (applyReactions): the reacted message's network id, then the reactor's row. */
const REACTION_COLUMNS = [
  ['target', 'text'],
  ['reactorKey', 'text'],
  ['reactor', 'text'],
  ['reactorLid', 'text'],
  ['emoji', 'text'],
  ['reactedAt', 'timestamp'],
] as const;

/** A chat's row (chatRowOf). */
const CHAT_COLUMNS = [
  ['sessionId', 'text'],
  ['chatId', 'text'],
  ['chatLid', 'text'],
  ['kind', 'text'],
  ['name', 'text'],
  ['lastMessageId', 'text'],
  ['lastMessageAt', 'timestamp'],
  ['unreadCount', 'integer'],
  ['createdAt', 'timestamp'],
] as const;

/** Beside a received message's row on PostgreSQL: its chat's kind and name (chatRowOf) and its place in the group. */
const RECEIVED_EXTRA = [
  ['chatKind', 'text'],
  ['chatName', 'text'],
  ['ord', 'integer'],
] as const;

/** A received message's writes: its row and its chat's (absent when it is not stored), and its file's record. */
interface ReceivedWrite {
  stored?: { row: JsonCell[]; chat: JsonCell[] };
  others: Prisma.Sql[];
}

/** Messages about another message: they change the stored one instead of becoming a row of their own. */
const REFERRING = new Set(['reaction', 'edit', 'revoke', 'poll_vote']);

const isStatusOrChannel = (chatId: string): boolean => chatId === 'status@broadcast' || chatId.endsWith('@newsletter');

/** The network's seconds as a time; a message without one is stamped when it arrived. */
const timeOf = (seconds: number, now: Date): Date => (seconds > 0 ? new Date(seconds * 1000) : now);

/**
 * The message store (issue 45, docs/conversations.md): every message a session sends and receives, one
 * row per network id per session, and each chat's latest message and unread count. A received message
 * is written before its network receipt, with its chat and its file's record, in one transaction with
 * the others that arrived meanwhile (see statementsOf); a message delivered again (a crash before its
 * receipt, a retry, another node after a failover) meets the unique (sessionId, waMessageId), leaves the
 * first row as it was and moves no chat. Reactions, edits and deletes change the message they are about.
 */
export class MessageStore implements ReceivedMessages, HistoryWrites {
  private readonly rows: (rows: JsonCell[][]) => Prisma.Sql;
  private readonly chatRows: (rows: JsonCell[][]) => Prisma.Sql;
  /**
   * Received messages' statements, those that arrive together (one upsert of several, or several links
   * in one turn of the event loop) in one transaction: a transaction per message cost more CPU than its
   * statements (docs/benchmarks.md, The message store). A message's failure stays its own.
   */
  private readonly writes: GroupCommit<ReceivedWrite>;
  /** PostgreSQL: a group's received messages with their chats' columns and their order (see receivedStatement) */
  private readonly receivedRows: (rows: JsonCell[][]) => Prisma.Sql;
  /** SQLite: a group's chat rows (chatRowOf) with their messages' ids and order (see statementsOf) */
  private readonly newChatRows: (rows: JsonCell[][]) => Prisma.Sql;
  /** push names from history: jid, name */
  private readonly nameRows: (rows: JsonCell[][]) => Prisma.Sql;
  /** reactions: the reacted message's network id, the reactor (REACTION_COLUMNS) */
  private readonly reactionRows: (rows: JsonCell[][]) => Prisma.Sql;
  /** each session's latest turn of receive: resolves once that message's writes are queued (see receive) */
  private readonly queued = new Map<string, Promise<{ written: Promise<void> } | undefined>>();

  constructor(private readonly options: MessageStoreOptions) {
    const raw = rawWrites(options.db);
    this.writes = groupCommit((writes) => raw(this.statementsOf(writes)), { isolateFailures: true });
    this.rows = jsonRows(options.provider, MESSAGE_COLUMNS);
    this.chatRows = jsonRows(options.provider, CHAT_COLUMNS);
    this.receivedRows = jsonRows(options.provider, [...MESSAGE_COLUMNS, ...RECEIVED_EXTRA]);
    this.nameRows = jsonRows(options.provider, [
      ['jid', 'text'],
      ['name', 'text'],
    ]);
    this.newChatRows = jsonRows(options.provider, [['id', 'text'], ...CHAT_COLUMNS, ['ord', 'integer']]);
    this.reactionRows = jsonRows(options.provider, REACTION_COLUMNS);
  }

  /**
   * A group's statements, then its files' records: a statement per message cost more than its rows
   * (docs/benchmarks.md, The message store). PostgreSQL: one statement for the messages and their chats
   * (receivedStatement). SQLite, which has no INSERT in WITH: the messages' insert, then each new row's
   * chat row in the group's order, as chatUpsert moves a chat message after message (SQLite's upsert
   * may update a row several times in one statement, PostgreSQL's may not); a row is new when its id is ours.
   */
  private statementsOf(writes: ReceivedWrite[]): Prisma.Sql[] {
    const stored = writes.flatMap((w) => (w.stored ? [w.stored] : []));
    const statements: Prisma.Sql[] = [];
    if (stored.length > 0 && this.options.provider === 'postgres')
      statements.push(
        receivedStatement(this.receivedRows(stored.map(({ row, chat: [, , , kind = null, name = null] }, i) => [...row, kind, name, i]))),
      );
    else if (stored.length > 0) {
      const chats = this.newChatRows(stored.map(({ row, chat }, i) => [row[0] ?? null, ...chat, i]));
      statements.push(
        this.insertRows(stored.map(({ row }) => row)),
        chatUpsert(Prisma.sql`SELECT r.* FROM (${chats}) AS r JOIN "Message" m ON m."id" = r."id" ORDER BY r."ord"`, Prisma.sql`true`),
      );
    }
    for (const w of writes) statements.push(...w.others);
    return statements;
  }

  /**
   * A session's received messages are queued for writing in the order receive was called, each without
   * waiting for the writes before it (so those that arrive while one is written share the next
   * transaction); a reaction, edit or delete waits for them, as it may be about one of them.
   */
  async receive(sessionId: string, message: ReceivedMessage): Promise<IncomingInput> {
    const input = incomingInputOf(message);
    const { messageId, media } = message;
    const withMedia = media && messageId ? { ...input, media: this.options.media.view(sessionId, messageId, media) } : input;
    if (!messageId) return withMedia;
    const before = this.queued.get(sessionId) ?? Promise.resolve(undefined);
    const queued = before.then(async (earlier) => {
      if (!REFERRING.has(message.type)) return this.queue(sessionId, message, messageId);
      await earlier?.written.catch(() => undefined);
      return { written: this.apply(sessionId, message) };
    });
    // A turn's failure is its message's own: the next one is queued all the same.
    const next = queued.catch(() => undefined);
    this.queued.set(sessionId, next);
    try {
      await (await queued).written;
    } finally {
      if (this.queued.get(sessionId) === next) this.queued.delete(sessionId);
    }
    return withMedia;
  }

  /** Queues a received message's writes; answers the promise of their being written (in an object: a promise would be awaited). */
  private async queue(sessionId: string, message: ReceivedMessage, messageId: string): Promise<{ written: Promise<void> }> {
    const { media, key } = message;
    const kept = this.options.statusesAndChannels || !isStatusOrChannel(message.chatId);
    const stored = key && kept && (await (this.options.keeps?.(sessionId) ?? true)) ? this.stored(sessionId, message, key) : undefined;
    const others = media ? [this.options.media.insert(sessionId, messageId, message.chatId, media)] : [];
    if (!stored && others.length === 0) return { written: Promise.resolve() };
    const writes: ReceivedWrite = stored ? { stored, others } : { others };
    const written = this.writes.add(writes);
    // awaited by receive once this turn ends; a failure meanwhile is not unhandled
    written.catch(() => undefined);
    return { written };
  }

  async find(sessionId: string, waMessageId: string): Promise<RememberedMessage | undefined> {
    const row = await this.options.db.message.findUnique({
      where: { sessionId_waMessageId: { sessionId, waMessageId } },
      select: { key: true, chatId: true, quotable: true, text: true, editedText: true, kind: true, deletedAt: true },
    });
    if (!row) return undefined;
    return {
      key: JSON.parse(row.key) as MessageKeyRef,
      chatId: row.chatId,
      content: row.editedText ?? row.text ?? `[${row.kind}]`,
      deletedAt: row.deletedAt,
      ...(row.quotable ? { quotable: row.quotable } : {}),
    };
  }

  /**
   * A received message's row and its chat's. Written (statementsOf) so that the message's row is left
   * alone when it was stored before, and only a new row moves its chat on: the latest message, one more
   * unread when it came in, none when the account wrote.
   */
  private stored(sessionId: string, message: ReceivedMessage, key: MessageKeyRef): { row: JsonCell[]; chat: JsonCell[] } {
    const now = this.options.now();
    return { row: this.rowOf(sessionId, message, key, now, 'live'), chat: this.chatRowOf(sessionId, message, now, message.fromMe ? 0 : 1) };
  }

  /**
   * A chunk of the phone's history sync (docs/conversations.md, History from the phone): its messages as
   * rows of source `history`, in batches of HISTORY_BATCH, each batch one transaction with its chats. A
   * message stored already (live, or by an earlier or resent chunk) keeps its row; a chat moves to its
   * latest message but keeps its unread count and a name it has. Answers how many rows were new.
   */
  async storeHistory(sessionId: string, messages: ReceivedMessage[]): Promise<number> {
    if (!(await (this.options.keeps?.(sessionId) ?? true))) return 0;
    const { db } = this.options;
    const now = this.options.now();
    const storable = messages.filter(
      (m) => m.messageId && m.key && !REFERRING.has(m.type) && (this.options.statusesAndChannels || !isStatusOrChannel(m.chatId)),
    );
    let stored = 0;
    for (let i = 0; i < storable.length; i += HISTORY_BATCH) {
      const batch = storable.slice(i, i + HISTORY_BATCH);
      const latest = new Map<string, ReceivedMessage>();
      for (const m of batch) {
        const seen = latest.get(m.chatId);
        if (!seen || m.messageTimestamp > seen.messageTimestamp) latest.set(m.chatId, m);
      }
      const chats = this.chatRows([...latest.values()].map((m) => this.chatRowOf(sessionId, m, now, 0)));
      const [inserted] = await db.$transaction([
        db.$executeRaw(this.insertRows(batch.map((m) => this.rowOf(sessionId, m, m.key as MessageKeyRef, now, 'history')))),
        db.$executeRaw(historyChatUpsert(chats)),
      ]);
      stored += inserted;
    }
    return stored;
  }

  /**
   * What a history chunk says happened to messages since (reactions, edits, deletes), applied in the
   * network's time order once the chunk's messages are stored, as a live one would be (apply); one about
   * a message the store does not hold changes nothing. Answers how many were applied.
   */
  async applyHistoryChanges(sessionId: string, changes: ReceivedMessage[]): Promise<number> {
    if (changes.length === 0 || !(await (this.options.keeps?.(sessionId) ?? true))) return 0;
    const ordered = changes
      .filter((m) => this.options.statusesAndChannels || !isStatusOrChannel(m.chatId))
      .sort((a, b) => a.messageTimestamp - b.messageTimestamp);
    // Reactions change nothing an edit or a delete reads: the chunk's are written together (a history
    // holds many: a statement or three each was most of a sync's time on PostgreSQL).
    await this.applyReactions(
      sessionId,
      ordered.filter((m) => m.type === 'reaction'),
    );
    for (const change of ordered) if (change.type !== 'reaction') await this.apply(sessionId, change);
    return ordered.length;
  }

  /**
   * Push names from the phone's history: a person's chat, by number JID or by LID, takes the name when it
   * has none (the first a chunk gives for it). One statement a chunk: the session's unnamed person chats
   * looked up in the names (a chunk names every chat it holds, hundreds; a statement each cost the
   * history sync most of its time on PostgreSQL).
   */
  async historyNames(sessionId: string, names: Array<{ jid: string; name: string }>): Promise<void> {
    const first = new Map<string, string>();
    for (const { jid, name } of names) if (!first.has(jid)) first.set(jid, name);
    if (first.size === 0) return;
    const rows = this.nameRows([...first]);
    await this.options.db.$executeRaw`WITH v AS (${rows})
      UPDATE "Chat" SET "name" = COALESCE((SELECT v."name" FROM v WHERE v."jid" = "Chat"."chatId"), (SELECT v."name" FROM v WHERE v."jid" = "Chat"."chatLid"))
      WHERE "sessionId" = ${sessionId} AND "kind" = 'person' AND "name" IS NULL
        AND ("chatId" IN (SELECT "jid" FROM v) OR "chatLid" IN (SELECT "jid" FROM v))`;
  }

  /** A chat's row as a message moves it (see chatUpsert). */
  private chatRowOf(sessionId: string, message: ReceivedMessage, now: Date, unread: number): JsonCell[] {
    return [
      sessionId,
      message.chatId,
      message.chatLid,
      chatKindOf(message.chatId),
      chatKindOf(message.chatId) === 'person' && !message.fromMe && message.pushName ? message.pushName : null,
      message.messageId,
      timeOf(message.messageTimestamp, now),
      unread,
      now,
    ];
  }

  private rowOf(sessionId: string, message: ReceivedMessage, key: MessageKeyRef, now: Date, source: 'live' | 'history'): JsonCell[] {
    return [
      uuidv7(),
      sessionId,
      message.messageId,
      message.fromMe ? 'out' : 'in',
      message.chatId,
      message.chatLid,
      message.from,
      message.fromLid,
      message.fromMe,
      message.type,
      message.text ?? null,
      message.quotedId ?? null,
      JSON.stringify(message.mentions ?? []),
      JSON.stringify(key),
      message.quotable ?? null,
      timeOf(message.messageTimestamp, now),
      now,
      source,
    ];
  }

  /** Stores messages' rows (rowOf), leaving the row of any stored before alone. */
  private insertRows(values: JsonCell[][]): Prisma.Sql {
    return Prisma.sql`${MESSAGE_INTO} FROM (${this.rows(values)}) AS r WHERE true ON CONFLICT ("sessionId", "waMessageId") DO NOTHING`;
  }

  /**
   * Reactions, in the network's time order: each reactor's current reaction on a message, one row per
   * person (by LID when known, as PollVote), replaced by a later reaction, removed by an empty one; an
   * older reaction arriving late changes nothing, and so does one on a message the store does not hold.
   * Only each reactor's last on a message counts (the earlier ones would be replaced by it): one upsert
   * for those that set an emoji, one delete for those that take it back. The rows lead the join (CROSS
   * JOIN: SQLite keeps that order), each finding its message by key; led by the session's messages,
   * SQLite walked them all (a history sync of 5,000 reactions: 72 s instead of 8).
   */
  private async applyReactions(sessionId: string, reactions: ReceivedMessage[]): Promise<void> {
    const now = this.options.now();
    const last = new Map<string, { emoji: string; row: JsonCell[] }>();
    for (const m of reactions) {
      if (!m.refersTo) continue;
      const reactorKey = m.fromLid ?? m.from;
      const row = [m.refersTo, reactorKey, m.from, m.fromLid, m.content, timeOf(m.messageTimestamp, now)];
      last.set(`${m.refersTo}\n${reactorKey}`, { emoji: m.content, row });
    }
    const set = [...last.values()].filter((r) => r.emoji !== '').map((r) => r.row);
    const taken = [...last.values()].filter((r) => r.emoji === '').map((r) => r.row);
    // each row's message, by key
    const found = (rows: JsonCell[][]) =>
      Prisma.sql`(${this.reactionRows(rows)}) AS v CROSS JOIN "Message" m WHERE m."sessionId" = ${sessionId} AND m."waMessageId" = v."target"`;
    const { db } = this.options;
    const statements = [
      ...(set.length > 0
        ? [
            db.$executeRaw`INSERT INTO "MessageReaction" ("messageId", "reactorKey", "reactor", "reactorLid", "emoji", "reactedAt")
              SELECT m."id", v."reactorKey", v."reactor", v."reactorLid", v."emoji", v."reactedAt" FROM ${found(set)}
              ON CONFLICT ("messageId", "reactorKey") DO UPDATE SET "reactor" = excluded."reactor", "reactorLid" = excluded."reactorLid",
                "emoji" = excluded."emoji", "reactedAt" = excluded."reactedAt"
              WHERE "MessageReaction"."reactedAt" <= excluded."reactedAt"`,
          ]
        : []),
      ...(taken.length > 0
        ? [
            // the IN lets PostgreSQL find the rows by key; the EXISTS matches each to its reactor and time
            db.$executeRaw`DELETE FROM "MessageReaction"
              WHERE "messageId" IN (SELECT m."id" FROM ${found(taken)})
                AND EXISTS (SELECT 1 FROM ${found(taken)} AND m."id" = "MessageReaction"."messageId"
                  AND v."reactorKey" = "MessageReaction"."reactorKey" AND "MessageReaction"."reactedAt" <= v."reactedAt")`,
          ]
        : []),
    ];
    if (statements.length === 1) await statements[0];
    else if (statements.length > 1) await db.$transaction(statements);
  }

  /**
   * A reaction, an edit or a delete changes the stored message it is about. One the store does not hold
   * (older than the store, or from a chat it leaves out) changes nothing; the message is received all the same.
   */
  private async apply(sessionId: string, message: ReceivedMessage): Promise<void> {
    const target = message.refersTo;
    if (!target) return;
    const { db } = this.options;
    const at = timeOf(message.messageTimestamp, this.options.now());
    const where = { sessionId, waMessageId: target };
    switch (message.type) {
      case 'reaction':
        await this.applyReactions(sessionId, [message]);
        return;
      case 'edit':
        // Only its author edits a message: the edit comes from the same side and the same person.
        await db.message.updateMany({
          where: { ...where, fromMe: message.fromMe, deletedAt: null, OR: authorOf(message) },
          data: { editedText: message.content, editedAt: at },
        });
        return;
      case 'revoke':
        // Its author deletes a message for everyone; in a group an admin may delete another member's.
        await db.message.updateMany({
          where: { ...where, deletedAt: null, ...(message.chatId.endsWith('@g.us') ? {} : { fromMe: message.fromMe }) },
          data: { text: null, quotable: null, editedText: null, deletedAt: at },
        });
        return;
      default:
        // A poll vote: the votes on this session's polls are PollVote rows (resolvers/polls.ts).
        return;
    }
  }
}

/** A chat's kind by its JID. */
export const chatKindOf = (chatId: string): 'person' | 'group' | 'channel' | 'status' | 'broadcast' => {
  if (chatId === 'status@broadcast') return 'status';
  if (chatId.endsWith('@broadcast')) return 'broadcast';
  if (chatId.endsWith('@g.us')) return 'group';
  if (chatId.endsWith('@newsletter')) return 'channel';
  return 'person';
};

// the columns' names are constants, never input
const MESSAGE_INTO =
  Prisma.raw(`INSERT INTO "Message" ("id", "sessionId", "waMessageId", "direction", "chatId", "chatLid", "sender", "senderLid", "fromMe", "kind", "text", "quotedId", "mentions", "key", "quotable", "messageTimestamp", "createdAt", "source")
  SELECT "id", "sessionId", "waMessageId", "direction", "chatId", "chatLid", "sender", "senderLid", "fromMe", "kind", "text", "quotedId", "mentions", "key", "quotable", "messageTimestamp", "createdAt", "source"`);
const CHAT_INTO =
  Prisma.raw(`INSERT INTO "Chat" ("sessionId", "chatId", "chatLid", "kind", "name", "lastMessageId", "lastMessageAt", "unreadCount", "createdAt")
  SELECT "sessionId", "chatId", "chatLid", "kind", "name", "lastMessageId", "lastMessageAt", "unreadCount", "createdAt"`);

/** How a message moves a chat it is stored in: its LID and name when it brings them, its latest message when it is not older. */
const CHAT_MOVES = Prisma.raw(`"chatLid" = COALESCE(excluded."chatLid", "Chat"."chatLid"),
      "name" = COALESCE(excluded."name", "Chat"."name"),
      "lastMessageId" = CASE WHEN excluded."lastMessageAt" >= "Chat"."lastMessageAt" THEN excluded."lastMessageId" ELSE "Chat"."lastMessageId" END,
      "lastMessageAt" = CASE WHEN excluded."lastMessageAt" >= "Chat"."lastMessageAt" THEN excluded."lastMessageAt" ELSE "Chat"."lastMessageAt" END`);

/**
 * A chat's row moved on by a message (`rows`: sessionId, chatId, chatLid, kind, name, lastMessageId,
 * lastMessageAt, unreadCount, createdAt), written when `when` holds: an older message arriving late
 * leaves the latest in place; a message in counts one unread, one out (the account wrote) clears them.
 */
export const chatUpsert = (rows: Prisma.Sql, when: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`${CHAT_INTO} FROM (${rows}) AS r WHERE ${when}
    ON CONFLICT ("sessionId", "chatId") DO UPDATE SET ${CHAT_MOVES},
      "unreadCount" = CASE WHEN excluded."unreadCount" > 0 THEN "Chat"."unreadCount" + excluded."unreadCount" ELSE 0 END`;

/**
 * PostgreSQL: a group of received messages (`rows`: MESSAGE_COLUMNS and RECEIVED_EXTRA) and their chats
 * in one statement, each chat moved once as chatUpsert would message after message, by the rows that
 * are new only: the latest message (the latest time, the last of equal ones); the unread counted on when
 * no message of the account's is among them, else those in after its last; its last name and LID. Chats
 * are written in key order, as concurrent groups lock them.
 */
const receivedStatement = (rows: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`WITH r AS (${rows}),
    m AS (${MESSAGE_INTO} FROM r ORDER BY "ord" ON CONFLICT ("sessionId", "waMessageId") DO NOTHING RETURNING "id"),
    n AS (SELECT r.*, max(CASE WHEN r."fromMe" THEN r."ord" END) OVER (PARTITION BY r."sessionId", r."chatId") AS "lastOut" FROM r JOIN m ON m."id" = r."id"),
    c AS (SELECT "sessionId", "chatId",
        (array_agg("chatLid" ORDER BY "ord" DESC) FILTER (WHERE "chatLid" IS NOT NULL))[1] AS "chatLid",
        min("chatKind") AS "kind",
        (array_agg("chatName" ORDER BY "ord" DESC) FILTER (WHERE "chatName" IS NOT NULL))[1] AS "name",
        (array_agg("waMessageId" ORDER BY "messageTimestamp" DESC, "ord" DESC))[1] AS "lastMessageId",
        max("messageTimestamp") AS "lastMessageAt",
        (count(*) FILTER (WHERE NOT "fromMe" AND "ord" > COALESCE("lastOut", -1)))::integer AS "unreadCount",
        bool_or("fromMe") AS "cleared",
        min("createdAt") AS "createdAt"
      FROM n GROUP BY "sessionId", "chatId")
    ${CHAT_INTO} FROM c ORDER BY "sessionId", "chatId"
    ON CONFLICT ("sessionId", "chatId") DO UPDATE SET ${CHAT_MOVES},
      "unreadCount" = CASE WHEN (SELECT c."cleared" FROM c WHERE c."sessionId" = excluded."sessionId" AND c."chatId" = excluded."chatId")
        THEN excluded."unreadCount" ELSE "Chat"."unreadCount" + excluded."unreadCount" END`;

/** Messages per statement when a history chunk is stored (a chunk may hold thousands). */
const HISTORY_BATCH = 500;

/**
 * Chats moved by a batch of history: created with no unread, moved to a later message, never counting
 * unread nor clearing it (history says nothing of what is read), and a name they have is kept.
 */
const historyChatUpsert = (rows: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`${CHAT_INTO} FROM (${rows}) AS r WHERE true
    ON CONFLICT ("sessionId", "chatId") DO UPDATE SET
      "chatLid" = COALESCE("Chat"."chatLid", excluded."chatLid"),
      "name" = COALESCE("Chat"."name", excluded."name"),
      "lastMessageId" = CASE WHEN excluded."lastMessageAt" > "Chat"."lastMessageAt" THEN excluded."lastMessageId" ELSE "Chat"."lastMessageId" END,
      "lastMessageAt" = CASE WHEN excluded."lastMessageAt" > "Chat"."lastMessageAt" THEN excluded."lastMessageAt" ELSE "Chat"."lastMessageAt" END`;

/** The rows that match a message's sender, by number JID or by LID. */
const authorOf = (message: Pick<ReceivedMessage, 'from' | 'fromLid'>): Prisma.MessageWhereInput[] => [
  { sender: message.from },
  ...(message.fromLid ? [{ senderLid: message.fromLid }] : []),
];
