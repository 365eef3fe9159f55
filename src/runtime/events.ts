import { createPubSub } from 'graphql-yoga';
import type { Session } from '../generated/sqlite/client.ts';
import type { CampaignProgress } from '../resolvers/scheduling.ts';
import type { IncomingItem } from './incoming-buffer.ts';

/** A session row as it changed, with the live QR image (never stored). */
export type SessionEvent = Session & { qrCode: string | null };

type Topics = {
  session: [sessionId: string, payload: SessionEvent];
  incoming: [sessionId: string, payload: IncomingItem];
  /** keyed by campaignTopic(accountId, campaignId): progress ids belong to an account */
  campaign: [topic: string, payload: CampaignProgress];
};

/** A campaign or bulk progress id is only ever seen, and fed, inside the account that uses it. */
export const campaignTopic = (accountId: string, campaignId: string): string => `${accountId}/${campaignId}`;

/** In-process fan-out for GraphQL subscriptions and long-polls. */
export const createEventBus = () => createPubSub<Topics>();
export type EventBus = ReturnType<typeof createEventBus>;
