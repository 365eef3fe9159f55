import type { Prisma } from '../../generated/sqlite/client.ts';
import type { OutboxEvent, OutboxRows } from './webhooks.ts';

export interface PendingRecord {
  id: string;
  accountId: string;
  sessionId: string;
  toNumber: string;
  content: string;
  kind: string;
  payload: string;
  waMessageId: string;
  createdAt: Date;
}

export interface SentMark {
  id: string;
  sessionId: string;
  /** the record's recipient as shown (toNumber): the stored message's chat */
  chatId: string;
  sentAt: Date;
  waMessageId: string;
  remoteJid: string;
  /** the recipient's LID, when the network told it */
  toLid: string | null;
  /** the message as it went out (base64 of proto.Message), for answering retry receipts later */
  sentMessage: string | null;
  /** webhook events of the mark (message.sent, and a bulk send's campaign.progress), written in its transaction when an endpoint wants them */
  events?: OutboxEvent[];
}

/** A recipient's acknowledgement times for one outgoing record; null leaves that time as it is. */
export interface ReceiptTimesRow {
  id: string;
  deliveredAt: Date | null;
  readAt: Date | null;
  playedAt: Date | null;
}

/**
 * The two writes of every immediate send, grouped across concurrent sends (runtime/db/outgoing-writes.ts).
 * The PENDING record is on disk before the send; the SENT mark is written behind, so whoever reads
 * outgoing records calls `settled()` first.
 */
export interface OutgoingWrites {
  pending: (record: PendingRecord) => Promise<void>;
  /** Only a PENDING record becomes SENT, so a FAILED set by an error ack in the meantime stays. */
  sent: (mark: SentMark) => void;
  /** Resolves once every write asked for so far is done. */
  settled: () => Promise<void>;
  /**
   * One statement for a batch of receipts: each time is set only where the record has none yet, so a
   * repeated or late receipt changes nothing. Not run until awaited or passed to `$transaction`.
   */
  receiptTimes: (rows: ReceiptTimesRow[]) => Prisma.PrismaPromise<number>;
  /**
   * The same statement and the outbox rows of its events (WebhookOutbox.rowsFor) in one transaction of raw
   * statements, cheaper than Prisma's; the caller tells the outbox `written` once it resolves.
   */
  receiptTimesWithEvents: (rows: ReceiptTimesRow[], outbox: OutboxRows[]) => Promise<void>;
  /**
   * The message store's rows of SENT records (direction out, outgoingId set) and their chats, in one
   * transaction; a record stored before changes nothing. The SENT marks write theirs in their own
   * transaction; a send that records SENT another way (a scheduled one) runs this after.
   */
  storeSent: (ids: string[]) => Promise<void>;
}
