/**
 * Counts requests per key in a fixed window (runtime/rate-limit.ts): in the process, or in Redis for
 * all nodes when REDIS_URL is set (docs/errors.md#rate-limits).
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
