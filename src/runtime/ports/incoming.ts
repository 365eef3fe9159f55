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

/** A message's key on the network: enough to react to it, quote it or delete it. */
export interface MessageKeyRef {
  /** the chat, as the network addressed it (a LID JID, a phone-number JID or a group) */
  remoteJid: string;
  id: string;
  fromMe: boolean;
  /** in a group: the sender */
  participant?: string;
}

/**
 * A message as the network hands it over: the buffer's fields, its network id, and its media when it has
 * some; its key and (when small enough) the message itself, so it can be reacted to and quoted; and for a
 * reaction, an edit or a delete, the network id of the message it is about.
 */
export type ReceivedMessage = Omit<IncomingInput, 'media' | 'waMessageId'> & {
  messageId: string;
  media?: ReceivedMedia;
  key?: MessageKeyRef;
  /** the message (proto.Message, base64), for a reply that quotes it */
  quotable?: string;
  /** its text or caption (none for a file without a caption), as the message store keeps it */
  text?: string;
  /** a reply: the network id of the message it quotes */
  quotedId?: string;
  /** the people it mentions (user JIDs, as the network wrote them) */
  mentions?: string[];
  /** reactions, edits, deletes and poll votes: the network id of the message they are about */
  refersTo?: string;
  /** a vote on one of this session's polls, decrypted with the poll's secret (absent when it could not be) */
  pollVote?: PollVoteReceived;
};

/** A decrypted vote: the options the voter chose now (none: the vote was withdrawn). */
export interface PollVoteReceived {
  /** the network id of the poll voted on */
  pollWaMessageId: string;
  /** the chosen options' names, in the poll's order */
  selectedOptions: string[];
  /** when the voter cast it (ms since the epoch), as the vote says */
  votedAt: number;
}

/** A stored message as a reaction, a quote or a delete needs it (runtime/message-store.ts). */
export interface RememberedMessage {
  key: MessageKeyRef;
  chatId: string;
  /** the message (proto.Message, base64) when it was small enough to keep */
  quotable?: string;
  /** its text or description, quoted as text when the message itself was not kept */
  content: string;
  /** when it was deleted for everyone */
  deletedAt: Date | null;
}

/**
 * The message store (runtime/message-store.ts): every message a session sends and receives, one row per
 * network id, in the database (so a message is found after a restart and from any node).
 */
export interface ReceivedMessages {
  /**
   * The buffer item of a received message, stored first with its file's record (one transaction), and a
   * reaction, an edit or a delete applied to the message it is about. Rejects when the write fails, so
   * the message is not receipted and the network delivers it again.
   */
  receive(sessionId: string, message: ReceivedMessage): Promise<IncomingInput>;
  find(sessionId: string, waMessageId: string): Promise<RememberedMessage | undefined>;
}

/** Messages a link could not decrypt yet, by network id, until the sender's resend arrives (in memory, bounded). */
export interface WaitingMessages {
  /** Notes a message as waiting since `at`; false when it was waiting already (a further failed attempt). */
  note(sessionId: string, waMessageId: string, at: string): boolean;
  /** When the message started waiting, if it did; it is waiting no more. */
  take(sessionId: string, waMessageId: string): string | undefined;
}

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
  /** extension: the network's id of the message, to react to it or quote it */
  waMessageId: string;
  /** only on items with media */
  media?: IncomingMediaView;
  /**
   * extension: the message first arrived undecryptable, and a message.waiting event with this
   * waMessageId was raised then (this time); absent on messages that were readable at once
   */
  waitingSince?: string;
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

/** Where the phone's history sync is written (runtime/message-store.ts). */
export interface HistoryWrites {
  /** a chunk's messages as rows of source `history`; answers how many rows were new */
  storeHistory(sessionId: string, messages: ReceivedMessage[]): Promise<number>;
  /** reactions, edits and deletes the chunk carries, applied to the stored messages they are about; answers how many */
  applyHistoryChanges(sessionId: string, changes: ReceivedMessage[]): Promise<number>;
  /** push names: a person's chat (by number JID or LID) takes the name when it has none */
  historyNames(sessionId: string, names: Array<{ jid: string; name: string }>): Promise<void>;
}

/** The periodic deletion of stored messages past their account's retention (runtime/message-retention.ts). */
export interface MessageRetentionJob {
  /** one run now: the rows it deleted */
  purge(): Promise<number>;
  stop(): void;
}
