/** An incoming message as the in-memory buffer (runtime/incoming-buffer.ts) keeps and hands it out. */
export interface IncomingItem {
  eventId: number;
  sessionId: string;
  chatId: string;
  from: string;
  fromMe: boolean;
  type: string;
  content: string;
  pushName: string;
  messageTimestamp: number;
  receivedAt: string;
}

export type IncomingInput = Omit<IncomingItem, 'eventId' | 'sessionId' | 'receivedAt'>;

/** The spec's buffer of incoming messages: per session, oldest first, bounded. */
export interface Incoming {
  push(sessionId: string, input: IncomingInput): IncomingItem;
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
