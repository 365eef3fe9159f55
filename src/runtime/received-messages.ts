import { LRUCache } from 'lru-cache';
import type { ReceivedMessage, ReceivedMessages, RememberedMessage, WaitingMessages } from './ports/incoming.ts';

/**
 * At most this many received messages, and this many bytes of them (quotable bodies are most of it), for
 * all sessions together: a budget per session would grow with the sessions (2,000 linked numbers at 2 MB
 * each), while the messages people react to or quote are the recent ones of whichever session is busy.
 */
const MESSAGES = 50_000;
const BYTES = 64 * 1024 * 1024;

/**
 * The last received messages, in memory, so a reaction or a reply can name one by its network id:
 * received messages are not stored (only their files), and a reaction or a quote needs the message's key
 * (its chat and sender as the network addressed them) and, for a quote, the message. Reactions, edits
 * and deletes are not kept: nobody reacts to a reaction.
 */
export class RecentReceived implements ReceivedMessages {
  private readonly recent = new LRUCache<string, RememberedMessage & { sessionId: string }>({
    max: MESSAGES,
    maxSize: BYTES,
    sizeCalculation: (m) => 200 + (m.quotable?.length ?? 0) + m.content.length,
  });

  remember(sessionId: string, message: ReceivedMessage): void {
    if (!message.key || message.refersTo !== undefined) return;
    this.recent.set(`${sessionId}\u0000${message.messageId}`, {
      sessionId,
      key: message.key,
      chatId: message.chatId,
      content: message.content,
      ...(message.quotable ? { quotable: message.quotable } : {}),
    });
  }

  find(sessionId: string, waMessageId: string): RememberedMessage | undefined {
    const found = this.recent.get(`${sessionId}\u0000${waMessageId}`);
    if (!found) return undefined;
    const { sessionId: _session, ...message } = found;
    return message;
  }

  forget(sessionId: string): void {
    for (const [key, message] of this.recent.entries()) if (message.sessionId === sessionId) this.recent.delete(key);
  }
}

/** Waiting messages kept at most (all sessions), and for how long: a sender resends within seconds, or gives up. */
const WAITING = 10_000;
const WAITING_MS = 24 * 60 * 60 * 1000;

/** Messages a link could not decrypt yet, so the resend's message.received can refer to its message.waiting. */
export class RecentWaiting implements WaitingMessages {
  private readonly waiting = new LRUCache<string, string>({ max: WAITING, ttl: WAITING_MS });

  note(sessionId: string, waMessageId: string, at: string): boolean {
    const key = `${sessionId}\u0000${waMessageId}`;
    if (this.waiting.has(key)) return false;
    this.waiting.set(key, at);
    return true;
  }

  take(sessionId: string, waMessageId: string): string | undefined {
    const key = `${sessionId}\u0000${waMessageId}`;
    const since = this.waiting.get(key);
    this.waiting.delete(key);
    return since;
  }
}
