import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiter } from './ports/limits.ts';

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
