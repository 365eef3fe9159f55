import type { Logger } from 'pino';
import { Prisma } from '../generated/sqlite/client.ts';
import type { IncomingMedia } from '../generated/sqlite/client.ts';
import type { Db } from './db/client.ts';
import { jsonRows } from './db/json-rows.ts';
import type { JsonCell } from './db/json-rows.ts';
import type { Provider } from './db/migrate.ts';
import type { IncomingInput, IncomingMediaFiles, IncomingMediaView, StoredMedia } from './ports/incoming.ts';
import type { ReceivedMedia, ReceivedMediaType, ReceivedMessage } from './ports/incoming.ts';
import { incomingInputOf } from './received-messages.ts';

export interface IncomingMediaOptions {
  db: Db;
  provider: Provider;
  logger: Logger;
  now: () => Date;
  /** how long after it arrived a received file can be downloaded; older rows are purged */
  retentionMs: number;
  /** the service's public base URL; when set, media URLs are absolute */
  publicUrl?: string;
}

const PURGE_EVERY_MS = 60 * 60 * 1000;

/** The API path of a received file (under /v1, like every REST route). */
export const incomingMediaPath = (sessionId: string, messageId: string): string =>
  `/v1/sessions/${encodeURIComponent(sessionId)}/incoming/${encodeURIComponent(messageId)}/media`;

const storedOf = (row: IncomingMedia): StoredMedia => ({
  locator: {
    mediaType: row.mediaType as ReceivedMediaType,
    mediaKey: row.mediaKey,
    ...(row.directPath ? { directPath: row.directPath } : {}),
    ...(row.url ? { url: row.url } : {}),
  },
  mimetype: row.mimetype,
  size: Number(row.size),
  fileName: row.fileName,
  fileSha256: row.fileSha256,
  receivedAt: row.receivedAt,
});

/**
 * Received files: what the network needs to fetch each one again is written to the database as it
 * arrives (so a download works after a restart, and from any node), and purged once the retention
 * window has passed, by a recurring job here.
 */
export class IncomingMediaStore implements IncomingMediaFiles {
  private purger: NodeJS.Timeout | null = null;
  private readonly base: string;
  private readonly rows: (rows: JsonCell[][]) => Prisma.Sql;

  constructor(private readonly options: IncomingMediaOptions) {
    this.base = options.publicUrl?.replace(/\/+$/, '') ?? '';
    this.rows = jsonRows(options.provider, [
      ['sessionId', 'text'],
      ['messageId', 'text'],
      ['chatId', 'text'],
      ['mediaType', 'text'],
      ['mimetype', 'text'],
      ['size', 'bigint'],
      ['fileName', 'text'],
      ['mediaKey', 'text'],
      ['directPath', 'text'],
      ['url', 'text'],
      ['fileSha256', 'text'],
      ['receivedAt', 'timestamp'],
    ]);
  }

  get retentionMs(): number {
    return this.options.retentionMs;
  }

  url(sessionId: string, messageId: string): string {
    return `${this.base}${incomingMediaPath(sessionId, messageId)}`;
  }

  /**
   * The buffer item of a received message: its media recorded first, so its URL answers as soon as a
   * client sees it. When the row cannot be written this rejects, so the message is not receipted and
   * the network delivers it again (an item without its media object would lose the file for good).
   * The message store (message-store.ts) writes the same record in its own transaction instead.
   */
  async receive(sessionId: string, message: ReceivedMessage): Promise<IncomingInput> {
    const input = incomingInputOf(message);
    const { messageId, media } = message;
    if (!media || !messageId) return input;
    await this.options.db.$executeRaw(this.insert(sessionId, messageId, input.chatId, media));
    return { ...input, media: this.view(sessionId, messageId, media) };
  }

  /**
   * The statement that records a received file. One INSERT that leaves an existing row alone (a message
   * delivered again, or a write that completed after its timeout, keeps its first row): no read before
   * the write, no failed statement that would end a PostgreSQL transaction it is part of.
   */
  insert(sessionId: string, messageId: string, chatId: string, media: ReceivedMedia): Prisma.Sql {
    const rows = this.rows([
      [
        sessionId,
        messageId,
        chatId,
        media.mediaType,
        media.mimetype,
        media.size,
        media.fileName,
        media.mediaKey,
        media.directPath ?? null,
        media.url ?? null,
        media.fileSha256 ?? null,
        this.options.now(),
      ],
    ]);
    return Prisma.sql`INSERT INTO "IncomingMedia" ("sessionId", "messageId", "chatId", "mediaType", "mimetype", "size", "fileName", "mediaKey", "directPath", "url", "fileSha256", "receivedAt")
      SELECT "sessionId", "messageId", "chatId", "mediaType", "mimetype", "size", "fileName", "mediaKey", "directPath", "url", "fileSha256", "receivedAt"
      FROM (${rows}) AS r WHERE true ON CONFLICT ("sessionId", "messageId") DO NOTHING`;
  }

  /** The item's media object of a received file. */
  view(sessionId: string, messageId: string, media: ReceivedMedia): IncomingMediaView {
    return { mimetype: media.mimetype, size: media.size, fileName: media.fileName, url: this.url(sessionId, messageId) };
  }

  async find(sessionId: string, messageId: string): Promise<StoredMedia | null> {
    const row = await this.options.db.incomingMedia.findUnique({ where: { sessionId_messageId: { sessionId, messageId } } });
    return row ? storedOf(row) : null;
  }

  expired(media: StoredMedia): boolean {
    return media.receivedAt.getTime() <= this.options.now().getTime() - this.options.retentionMs;
  }

  /** Deletes the rows past the retention window; safe to run from several processes at once. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.options.now().getTime() - this.options.retentionMs);
    return (await this.options.db.incomingMedia.deleteMany({ where: { receivedAt: { lte: cutoff } } })).count;
  }

  /** Purges now and then: hourly, or as often as the window itself when it is shorter (a second at least). */
  start(): void {
    if (this.purger) return;
    const every = Math.max(1_000, Math.min(PURGE_EVERY_MS, this.options.retentionMs));
    this.purger = setInterval(() => {
      this.purge().then(
        (count) => {
          if (count > 0) this.options.logger.debug({ count }, 'purged received files past their retention');
        },
        (err: unknown) => this.options.logger.warn({ err }, 'purging expired received files failed'),
      );
    }, every);
    this.purger.unref();
  }

  stop(): void {
    if (this.purger) clearInterval(this.purger);
    this.purger = null;
  }
}
