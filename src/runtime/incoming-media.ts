import type { Logger } from 'pino';
import type { IncomingMedia } from '../generated/sqlite/client.ts';
import type { Db } from './db/client.ts';
import type { IncomingInput, IncomingMediaFiles, IncomingMediaView, StoredMedia } from './ports/incoming.ts';
import type { ReceivedMediaType, ReceivedMessage } from './ports/incoming.ts';

export interface IncomingMediaOptions {
  db: Db;
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

  constructor(private readonly options: IncomingMediaOptions) {
    this.base = options.publicUrl?.replace(/\/+$/, '') ?? '';
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
   */
  async receive(sessionId: string, message: ReceivedMessage): Promise<IncomingInput> {
    const { messageId, media, key: _key, quotable: _quotable, refersTo: _refersTo, ...fields } = message;
    const input: IncomingInput = { ...fields, waMessageId: messageId };
    if (!media || !messageId) return input;
    try {
      // One INSERT rather than an upsert (a read, then a write): fewer steps that can meet the network
      // thread's key writes to the same SQLite file. A message delivered twice keeps its first row.
      await this.options.db.incomingMedia.create({
        data: {
          sessionId,
          messageId,
          chatId: input.chatId,
          mediaType: media.mediaType,
          mimetype: media.mimetype,
          size: BigInt(media.size),
          fileName: media.fileName,
          mediaKey: media.mediaKey,
          directPath: media.directPath ?? null,
          url: media.url ?? null,
          fileSha256: media.fileSha256 ?? null,
          receivedAt: this.options.now(),
        },
      });
    } catch (err) {
      // P2002: the row of a message delivered again (or of a write that completed after its timeout).
      if ((err as { code?: unknown }).code !== 'P2002') throw err;
    }
    const view: IncomingMediaView = {
      mimetype: media.mimetype,
      size: media.size,
      fileName: media.fileName,
      url: this.url(sessionId, messageId),
    };
    return { ...input, media: view };
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
