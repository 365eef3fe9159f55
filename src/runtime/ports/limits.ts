/**
 * Counts requests per key in a fixed window (runtime/rate-limit.ts). Behind this interface so that
 * several nodes can share counters later (rate-limiter-flexible's Redis store has the same consume
 * call); see scale-out.md.
 */
export interface RateLimiter {
  /** Takes one request for `key`; null when allowed, else the seconds to wait before the next one. */
  take: (key: string) => Promise<number | null>;
}

/** Falls back to plain text for a session whose button sends are refused (runtime/button-guard.ts). */
export interface Buttons {
  allows(sessionId: string): boolean;
  failed(sessionId: string): void;
}
