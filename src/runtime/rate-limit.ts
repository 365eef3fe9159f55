import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimiter } from './ports/limits.ts';

const unlimited: RateLimiter = { take: async () => null };

const KEY_PREFIX = 'wa-rate';

/**
 * `requests` per `windowSeconds` for each key; 0 requests switches the limit off (benchmarks, load
 * tests). With a Redis client (REDIS_URL), the nodes of a cluster count in one window per key; while
 * Redis does not answer, each node counts in its own memory (the same limit, per node) rather than
 * refuse or let everything through.
 */
export const createRateLimiter = (requests: number, windowSeconds: number, redis?: Redis): RateLimiter => {
  if (requests <= 0) return unlimited;
  const memory = new RateLimiterMemory({ points: requests, duration: windowSeconds, keyPrefix: KEY_PREFIX });
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points: requests,
        duration: windowSeconds,
        keyPrefix: KEY_PREFIX,
        insuranceLimiter: memory,
      })
    : memory;
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
