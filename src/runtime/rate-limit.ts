import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Counts requests per key in a fixed window. Behind this interface so that several nodes can share
 * counters later (rate-limiter-flexible's Redis store has the same consume call); see scale-out.md.
 */
export interface RateLimiter {
  /** Takes one request for `key`; null when allowed, else the seconds to wait before the next one. */
  take: (key: string) => Promise<number | null>;
}

const unlimited: RateLimiter = { take: async () => null };

/** `requests` per `windowSeconds` for each key; 0 requests switches the limit off (benchmarks, load tests). */
export const createRateLimiter = (requests: number, windowSeconds: number): RateLimiter => {
  if (requests <= 0) return unlimited;
  const limiter = new RateLimiterMemory({ points: requests, duration: windowSeconds });
  return {
    take: async (key) => {
      try {
        await limiter.consume(key);
        return null;
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
        throw refusal;
      }
    },
  };
};
