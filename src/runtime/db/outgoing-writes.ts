import type { Logger } from 'pino';
import type { Db } from '../ports/db.ts';
import type { OutgoingWrites, PendingRecord, ReceiptTimesRow, SentMark } from '../ports/outgoing.ts';
import type { WebhookOutbox } from '../ports/webhooks.ts';
import { Prisma } from '../../generated/sqlite/client.ts';
import { groupCommit } from './group-commit.ts';
import { jsonRows, notIndexed } from './json-rows.ts';
import { providerOf } from './migrate.ts';
import { rawWrites } from './raw-writes.ts';
import { chatUpsert } from '../message-store.ts';
import type { Provider } from './migrate.ts';

/** How long a SENT mark may wait for others; a crash meanwhile leaves PENDING, which is sent again at start under the same network id. */
const SENT_MARK_DELAY_MS = 20;

/** The statement that marks a batch SENT: only records still PENDING, so a FAILED set meanwhile stays. */
export const sentMarks = (provider: Provider): ((marks: Array<Omit<SentMark, 'sessionId' | 'chatId'>>) => Prisma.Sql) => {
  const table = jsonRows(provider, [
    ['id', 'text'],
    ['sentAt', 'timestamp'],
    ['waMessageId', 'text'],
    ['remoteJid', 'text'],
    ['toLid', 'text'],
    ['sentMessage', 'text'],
  ]);
  // not through the (status, sendAt) index, which holds every scheduled record too
  const status = notIndexed(provider, '"OutgoingMessage"."status"');
  return (marks) => {
    const rows = table(marks.map((m) => [m.id, m.sentAt, m.waMessageId, m.remoteJid, m.toLid, m.sentMessage]));
    return Prisma.sql`UPDATE "OutgoingMessage" SET "status" = 'SENT', "sentAt" = v."sentAt", "waMessageId" = v."waMessageId", "remoteJid" = v."remoteJid", "toLid" = v."toLid", "sentMessage" = v."sentMessage"
      FROM (${rows}) AS v WHERE "OutgoingMessage"."id" = v."id" AND ${status} = 'PENDING'`;
  };
};

/**
 * The statement that stores SENT records in the message store (docs/conversations.md): the chat is the
 * record's recipient, the sender the session's own number, the quote and mentions those of its payload.
 * Status posts stay out of it. The Message row takes its record's id (a UUIDv7 already).
 */
export const storedSent = (provider: Provider): ((ids: string[]) => Prisma.Sql[]) => {
  const table = jsonRows(provider, [['id', 'text']]);
  const status = notIndexed(provider, 'o."status"');
  const postgres = provider === 'postgres';
  const quotedId = Prisma.raw(postgres ? `(o."payload"::json #>> '{quoted,key,id}')` : `json_extract(o."payload", '$.quoted.key.id')`);
  const mentions = Prisma.raw(
    postgres ? `COALESCE((o."payload"::json -> 'mentions')::text, '[]')` : `COALESCE(json_extract(o."payload", '$.mentions'), '[]')`,
  );
  const key = Prisma.raw(
    postgres
      ? `json_build_object('remoteJid', o."remoteJid", 'id', o."waMessageId", 'fromMe', true)::text`
      : `json_object('remoteJid', o."remoteJid", 'id', o."waMessageId", 'fromMe', json('true'))`,
  );
  const chatKind = Prisma.raw(
    `CASE WHEN o."toNumber" = 'status@broadcast' THEN 'status' WHEN o."toNumber" LIKE '%@broadcast' THEN 'broadcast' WHEN o."toNumber" LIKE '%@g.us' THEN 'group' WHEN o."toNumber" LIKE '%@newsletter' THEN 'channel' ELSE 'person' END`,
  );
  // An account that stores nothing beyond the spec's routes (messageStore specOnly) keeps its outgoing records only.
  const keeps = Prisma.raw(`COALESCE(a."messageStore", 'all') <> 'specOnly'`);
  return (ids) => {
    const rows = table(ids.map((id) => [id]));
    // The chat moves on to the message and its unread count clears (the account wrote in it); repeated, it
    // changes nothing more. One row per chat, its latest message: PostgreSQL refuses an upsert that meets
    // the same row twice (a batch of sends to one chat). In key order, as a group of received messages
    // writes its chats: two batches meeting the same chats wait for each other instead of deadlocking.
    const chat = chatUpsert(
      Prisma.sql`SELECT * FROM (SELECT o."sessionId", o."toNumber" AS "chatId", o."toLid" AS "chatLid", ${chatKind} AS "kind", NULL AS "name",
          o."waMessageId" AS "lastMessageId", COALESCE(o."sentAt", o."createdAt") AS "lastMessageAt", 0 AS "unreadCount",
          COALESCE(o."sentAt", o."createdAt") AS "createdAt",
          ROW_NUMBER() OVER (PARTITION BY o."sessionId", o."toNumber" ORDER BY COALESCE(o."sentAt", o."createdAt") DESC, o."id" DESC) AS "n"
        FROM (${rows}) AS v JOIN "OutgoingMessage" o ON o."id" = v."id" JOIN "Account" a ON a."id" = o."accountId"
        WHERE ${status} = 'SENT' AND o."waMessageId" IS NOT NULL AND o."remoteJid" IS NOT NULL AND o."kind" <> 'status' AND ${keeps}) AS latest
        WHERE "n" = 1 ORDER BY "sessionId", "chatId"`,
      Prisma.sql`true`,
    );
    return [
      chat,
      Prisma.sql`INSERT INTO "Message" ("id", "sessionId", "waMessageId", "direction", "chatId", "chatLid", "sender", "fromMe", "kind", "text", "quotedId", "mentions", "key", "messageTimestamp", "createdAt", "outgoingId")
      SELECT o."id", o."sessionId", o."waMessageId", 'out', o."toNumber", o."toLid", COALESCE(s."phone", ''), true, o."kind", o."content", ${quotedId}, ${mentions}, ${key},
        COALESCE(o."sentAt", o."createdAt"), COALESCE(o."sentAt", o."createdAt"), o."id"
      FROM (${rows}) AS v JOIN "OutgoingMessage" o ON o."id" = v."id" JOIN "Session" s ON s."id" = o."sessionId" JOIN "Account" a ON a."id" = o."accountId"
      WHERE ${status} = 'SENT' AND o."waMessageId" IS NOT NULL AND o."remoteJid" IS NOT NULL AND o."kind" <> 'status' AND ${keeps}
      ON CONFLICT ("sessionId", "waMessageId") DO NOTHING`,
    ];
  };
};

/**
 * `stored` hears each batch of SENT marks once their transaction committed (their message store rows
 * with it): the composition root pushes them to the chatUpdates and storedMessageUpdates subscriptions.
 */
export const createOutgoingWrites = (
  db: Db,
  databaseUrl: string,
  logger: Logger,
  webhooks?: WebhookOutbox,
  stored?: (marks: SentMark[]) => void,
): OutgoingWrites => {
  // Each batch is one statement whose rows are one JSON parameter (json-rows.ts).
  const provider = providerOf(databaseUrl);
  const pendingTable = jsonRows(provider, [
    ['id', 'text'],
    ['accountId', 'text'],
    ['sessionId', 'text'],
    ['toNumber', 'text'],
    ['content', 'text'],
    ['kind', 'text'],
    ['payload', 'text'],
    ['waMessageId', 'text'],
    ['createdAt', 'timestamp'],
  ]);
  const markSent = sentMarks(provider);
  const storeSent = storedSent(provider);
  const receiptTable = jsonRows(provider, [
    ['id', 'text'],
    ['deliveredAt', 'timestamp'],
    ['readAt', 'timestamp'],
    ['playedAt', 'timestamp'],
  ]);

  // The hot batch writes run as raw statements, several in one transaction (raw-writes.ts: Prisma's
  // $transaction and $executeRaw cost more CPU than the statements).
  const raw = rawWrites(db);
  const inserts = groupCommit<PendingRecord>(async (records) => {
    const rows = pendingTable(
      records.map((r) => [r.id, r.accountId, r.sessionId, r.toNumber, r.content, r.kind, r.payload, r.waMessageId, r.createdAt]),
    );
    await raw([
      Prisma.sql`INSERT INTO "OutgoingMessage" ("id", "accountId", "sessionId", "toNumber", "content", "kind", "payload", "status", "waMessageId", "createdAt")
      SELECT "id", "accountId", "sessionId", "toNumber", "content", "kind", "payload", 'PENDING', "waMessageId", "createdAt" FROM (${rows}) AS r`,
    ]);
  });

  const marks = groupCommit<SentMark>(
    async (sent) => {
      // Accounts without a matching endpoint (the in-memory index says so) add nothing to the statement.
      const outbox = webhooks
        ? (await Promise.all(sent.flatMap((m) => (m.events ?? []).map((e) => webhooks.rowsFor(e))))).filter((r) => r !== null)
        : [];
      // The message store's rows of the records just marked: in the mark's transaction, so a SENT record has its row.
      await raw([markSent(sent), ...storeSent(sent.map((m) => m.id)), ...(webhooks ? webhooks.writeSql(outbox) : [])]);
      if (outbox.length > 0) webhooks?.written(outbox);
      stored?.(sent);
    },
    { delayMs: SENT_MARK_DELAY_MS },
  );

  // A Prisma updateMany per record cost a compiled statement per message (the main thread's largest
  // database item while sending); one raw statement carries a whole batch.
  const receiptTimesSql = (rows: ReceiptTimesRow[]) => {
    const values = receiptTable(rows.map((r) => [r.id, r.deliveredAt, r.readAt, r.playedAt]));
    return Prisma.sql`UPDATE "OutgoingMessage" SET "deliveredAt" = COALESCE("OutgoingMessage"."deliveredAt", v."deliveredAt"),
      "readAt" = COALESCE("OutgoingMessage"."readAt", v."readAt"), "playedAt" = COALESCE("OutgoingMessage"."playedAt", v."playedAt")
      FROM (${values}) AS v WHERE "OutgoingMessage"."id" = v."id"`;
  };

  return {
    pending: inserts.add,
    receiptTimes: (rows) => db.$executeRaw(receiptTimesSql(rows)),
    receiptTimesWithEvents: async (rows, outbox) => {
      await raw([receiptTimesSql(rows), ...(webhooks ? webhooks.writeSql(outbox) : [])]);
    },
    storeSent: (ids) => db.$transaction(storeSent(ids).map((sql) => db.$executeRaw(sql))).then(() => undefined),
    sent: (mark) => {
      marks
        .add(mark)
        .catch((err: unknown) =>
          logger.error({ err, messageId: mark.id }, 'marking a sent message failed; it stays PENDING and is sent again at start'),
        );
    },
    settled: async () => {
      await inserts.settled();
      await marks.settled();
    },
  };
};
