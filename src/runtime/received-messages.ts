import { LRUCache } from 'lru-cache';
import type { ReceivedMessage, ReceivedMessages, RememberedMessage } from './ports/incoming.ts';

/** Per session: at most this many received messages, and this many bytes of them (quotable bodies are most of it). */
const PER_SESSION = 1000;
const BYTES_PER_SESSION = 2 * 1024 * 1024;

/**
 * The last received messages of each session, in memory, so a reaction or a reply can name one by its
 * network id: received messages are not stored (only their files), and a reaction or a quote needs the
 * message's key (its chat and sender as the network addressed them) and, for a quote, the message.
 * Reactions, edits and deletes are not kept: nobody reacts to a reaction.
 */
export class RecentReceived implements ReceivedMessages {
  private readonly sessions = new Map<string, LRUCache<string, RememberedMessage>>();

  remember(sessionId: string, message: ReceivedMessage): void {
    if (!message.key || message.refersTo !== undefined) return;
    let recent = this.sessions.get(sessionId);
    if (!recent) {
      recent = new LRUCache<string, RememberedMessage>({
        max: PER_SESSION,
        maxSize: BYTES_PER_SESSION,
        sizeCalculation: (m) => 200 + (m.quotable?.length ?? 0) + m.content.length,
      });
      this.sessions.set(sessionId, recent);
    }
    recent.set(message.messageId, {
      key: message.key,
      chatId: message.chatId,
      content: message.content,
      ...(message.quotable ? { quotable: message.quotable } : {}),
    });
  }

  find(sessionId: string, waMessageId: string): RememberedMessage | undefined {
    return this.sessions.get(sessionId)?.get(waMessageId);
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
}
