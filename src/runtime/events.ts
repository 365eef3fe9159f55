import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { EventBus, Topics } from './ports/events.ts';

/** At most one warning this often while publishing to Redis fails (each counts the events missed since the last). */
const PUBLISH_WARN_EVERY_MS = 10_000;

/** Dates travel tagged, so only what was a Date comes back as one (ISO strings in payloads stay strings). */
const DATE_TAG = '$date';

export const serializeEvent = (payload: unknown): string =>
  JSON.stringify(payload, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { [DATE_TAG]: raw.toISOString() } : value;
  });

export const parseEvent = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const tagged = (value as Record<string, unknown>)[DATE_TAG];
      if (typeof tagged === 'string' && Object.keys(value).length === 1) return new Date(tagged);
    }
    return value;
  });

export interface EventBusHandle {
  events: EventBus;
  close: () => Promise<void>;
}

/**
 * Fan-out for GraphQL subscriptions and long-polls: in the process, or through Redis pub/sub when
 * REDIS_URL is set, so that a client of one node sees what a session linked on another raised.
 */
export const createEventBus = (redisUrl?: string, logger?: Logger): EventBusHandle => {
  if (!redisUrl) return { events: createPubSub<Topics>(), close: async () => undefined };
  const publishClient = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const subscribeClient = new Redis(redisUrl);
  // ioredis reconnects by itself; an error without a listener would end the process.
  for (const client of [publishClient, subscribeClient]) client.on('error', (err) => logger?.warn({ err }, 'Redis (events) failed'));
  const redisTarget = createRedisEventTarget({
    publishClient,
    subscribeClient,
    serializer: { stringify: serializeEvent, parse: parseEvent },
  });
  // The library's dispatchEvent drops the publish's promise: a publish that fails (Redis away past the
  // client's retries, or the client closed while a stopping node still hands over received messages)
  // was an unhandled rejection, which ended the process (exit 1, its leases left to lapse). Subscribers miss that event; it is logged.
  let warnedAt = Number.NEGATIVE_INFINITY;
  let missed = 0;
  const eventTarget: typeof redisTarget = {
    ...redisTarget,
    dispatchEvent: (event) => {
      publishClient.publish(event.type, event.detail === undefined ? '' : serializeEvent(event.detail)).catch((err: unknown) => {
        missed += 1;
        if (Date.now() - warnedAt < PUBLISH_WARN_EVERY_MS) return;
        warnedAt = Date.now();
        logger?.warn({ err, missed }, 'publishing an event to Redis failed; its subscribers miss it');
        missed = 0;
      });
      return true;
    },
  };
  return {
    events: createPubSub<Topics>({ eventTarget }),
    close: async () => {
      await Promise.all([publishClient.quit().catch(() => undefined), subscribeClient.quit().catch(() => undefined)]);
    },
  };
};
