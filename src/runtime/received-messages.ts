import { LRUCache } from 'lru-cache';
import type { IncomingInput, ReceivedMessage, WaitingMessages } from './ports/incoming.ts';

/** A received message's buffer fields: what the network handed over, without what only the service keeps. */
export const incomingInputOf = (message: ReceivedMessage): IncomingInput => {
  const {
    messageId,
    media: _media,
    key: _key,
    quotable: _quotable,
    refersTo: _refersTo,
    text: _text,
    quotedId: _quotedId,
    mentions: _mentions,
    ...fields
  } = message;
  return { ...fields, waMessageId: messageId };
};

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
