/** The media types whose keys a received file is encrypted with. */
export type ReceivedMediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** Where a received file lives on the network's media host and how to decrypt it: enough to fetch it again later. */
export interface MediaLocator {
  mediaType: ReceivedMediaType;
  /** base64 */
  mediaKey: string;
  directPath?: string;
  url?: string;
}

export interface ReceivedMedia extends MediaLocator {
  mimetype: string;
  /** bytes of the decrypted file */
  size: number;
  fileName: string | null;
  /** base64 SHA-256 of the decrypted file, as the sender stated it */
  fileSha256?: string;
}

/** A message as the network hands it over: the buffer's fields, its network id, and its media when it has some. */
export type ReceivedMessage = Omit<IncomingInput, 'media'> & { messageId: string; media?: ReceivedMedia };

/** A stored received file, as the download route needs it. */
export interface StoredMedia {
  locator: MediaLocator;
  mimetype: string;
  size: number;
  fileName: string | null;
  /** base64 SHA-256 of the decrypted file, as the sender stated it */
  fileSha256: string | null;
  receivedAt: Date;
}

/** Received files: their records, retention window and URLs (runtime/incoming-media.ts). */
export interface IncomingMediaFiles {
  readonly retentionMs: number;
  url(sessionId: string, messageId: string): string;
  /** The buffer item of a received message, its media recorded first. */
  receive(sessionId: string, message: ReceivedMessage): Promise<IncomingInput>;
  find(sessionId: string, messageId: string): Promise<StoredMedia | null>;
  expired(media: StoredMedia): boolean;
  /** Deletes the records past the retention window. */
  purge(): Promise<number>;
  stop(): void;
}

/** An extension of the spec's item: a received file, downloadable from `url` for the retention window. */
export interface IncomingMediaView {
  mimetype: string;
  /** bytes of the decrypted file */
  size: number;
  /** as the sender named it (documents); null when it gave none */
  fileName: string | null;
  /** our own API's URL of the file: path-relative (/v1/...), or absolute when PUBLIC_URL is set */
  url: string;
}

/** An incoming message as the in-memory buffer (runtime/incoming-buffer.ts) keeps and hands it out. */
export interface IncomingItem {
  eventId: number;
  sessionId: string;
  chatId: string;
  /** extension: the chat's LID beside its phone-number JID (1:1 chats), when the network told it; null otherwise */
  chatLid: string | null;
  /** the sender's phone-number JID when known, else its LID JID (never a LID presented as a number) */
  from: string;
  /** extension: the sender's LID, when the network told it; null otherwise */
  fromLid: string | null;
  fromMe: boolean;
  type: string;
  content: string;
  pushName: string;
  messageTimestamp: number;
  receivedAt: string;
  /** only on items with media */
  media?: IncomingMediaView;
}

export type IncomingInput = Omit<IncomingItem, 'eventId' | 'sessionId' | 'receivedAt'>;

/** The spec's buffer of incoming messages: per session, oldest first, bounded. */
export interface Incoming {
  push(sessionId: string, input: IncomingInput): IncomingItem;
  /** The item `push` would make (its event id and time), not in the buffer until `add`. */
  prepare(sessionId: string, input: IncomingInput): IncomingItem;
  add(item: IncomingItem): void;
  read(sessionId: string, limit: number, consume: boolean): IncomingItem[];
  size(sessionId: string): number;
  dropped(sessionId: string): number;
  /** every item ever dropped, across sessions (for metrics) */
  readonly droppedTotal: number;
  /** Resolves when the session has an item, after `ms`, or when `signal` aborts. */
  waitForItem(sessionId: string, ms: number, signal?: AbortSignal): Promise<void>;
  wakeAll(): void;
  forget(sessionId: string): void;
}
