import { createPubSub } from 'graphql-yoga';
import type { EventBus, Topics } from './ports/events.ts';

/** In-process fan-out for GraphQL subscriptions and long-polls. */
export const createEventBus = (): EventBus => createPubSub<Topics>();
