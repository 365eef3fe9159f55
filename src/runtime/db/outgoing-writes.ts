import type { Logger } from 'pino';
import { Prisma } from '../../generated/sqlite/client.ts';
import type { Db } from '../ports/db.ts';
import type { OutgoingWrites, PendingRecord, ReceiptTimesRow, SentMark } from '../ports/outgoing.ts';
import type { WebhookOutbox } from '../ports/webhooks.ts';
import { groupCommit } from './group-commit.ts';
import { providerOf } from './migrate.ts';

/** How long a SENT mark may wait for others; a crash meanwhile leaves PENDING, which is sent again at start under the same network id. */
const SENT_MARK_DELAY_MS = 20;

export const createOutgoingWrites = (db: Db, databaseUrl: string, logger: Logger, webhooks?: WebhookOutbox): OutgoingWrites => {
  // VALUES columns are text to PostgreSQL unless cast; SQLite stores what it is given.
  const asTimestamp = providerOf(databaseUrl) === 'postgres' ? Prisma.raw('::timestamp(3)') : Prisma.empty;

  const inserts = groupCommit<PendingRecord>(async (records) => {
    const rows = Prisma.join(
      records.map(
        (r) =>
          Prisma.sql`(${r.id}, ${r.accountId}, ${r.sessionId}, ${r.toNumber}, ${r.content}, ${r.kind}, ${r.payload}, 'PENDING', ${r.waMessageId}, ${r.createdAt})`,
      ),
    );
    await db.$executeRaw`INSERT INTO "OutgoingMessage" ("id", "accountId", "sessionId", "toNumber", "content", "kind", "payload", "status", "waMessageId", "createdAt") VALUES ${rows}`;
  });

  const marks = groupCommit<SentMark>(
    async (sent) => {
      const rows = Prisma.join(sent.map((m) => Prisma.sql`(${m.id}, ${m.sentAt}, ${m.waMessageId}, ${m.remoteJid}, ${m.sentMessage})`));
      const update = db.$executeRaw`UPDATE "OutgoingMessage" SET "status" = 'SENT', "sentAt" = v.column2${asTimestamp}, "waMessageId" = v.column3, "remoteJid" = v.column4, "sentMessage" = v.column5
      FROM (VALUES ${rows}) AS v WHERE "OutgoingMessage"."id" = v.column1 AND "OutgoingMessage"."status" = 'PENDING'`;
      // Accounts without a matching endpoint (the in-memory index says so) add nothing to the statement.
      const outbox = webhooks
        ? (await Promise.all(sent.flatMap((m) => (m.events ?? []).map((e) => webhooks.rowsFor(e))))).filter((r) => r !== null)
        : [];
      if (outbox.length === 0 || !webhooks) {
        await update;
        return;
      }
      await db.$transaction([update, ...webhooks.writes(outbox)]);
      webhooks.written(outbox);
    },
    { delayMs: SENT_MARK_DELAY_MS },
  );

  // A Prisma updateMany per record cost a compiled statement per message (the main thread's largest
  // database item while sending); one raw statement carries a whole batch.
  const receiptTimes = (rows: ReceiptTimesRow[]) => {
    const values = Prisma.join(rows.map((r) => Prisma.sql`(${r.id}, ${r.deliveredAt}, ${r.readAt}, ${r.playedAt})`));
    return db.$executeRaw`UPDATE "OutgoingMessage" SET "deliveredAt" = COALESCE("OutgoingMessage"."deliveredAt", v.column2${asTimestamp}),
      "readAt" = COALESCE("OutgoingMessage"."readAt", v.column3${asTimestamp}), "playedAt" = COALESCE("OutgoingMessage"."playedAt", v.column4${asTimestamp})
      FROM (VALUES ${values}) AS v WHERE "OutgoingMessage"."id" = v.column1`;
  };

  return {
    pending: inserts.add,
    receiptTimes,
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
