import type { PubSub } from 'graphql-yoga';
import type { Session } from '../../generated/sqlite/client.ts';
import type { IncomingItem } from './incoming.ts';

/** A session row as it changed, with the live QR image (never stored). */
export type SessionEvent = Session & { qrCode: string | null };

/** A campaign's or bulk send's progress, as subscriptions and the campaign.progress webhook see it. */
export interface CampaignProgress {
  campaignId: string;
  total: number;
  sent: number;
  failed: number;
  remaining: number;
}

export type Topics = {
  session: [sessionId: string, payload: SessionEvent];
  incoming: [sessionId: string, payload: IncomingItem];
  /** keyed by campaignTopic(accountId, campaignId): progress ids belong to an account */
  campaign: [topic: string, payload: CampaignProgress];
};

/** In-process fan-out for GraphQL subscriptions and long-polls (runtime/events.ts). */
export type EventBus = PubSub<Topics>;
