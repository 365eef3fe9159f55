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

/** A reaction, an edit or a delete received, pointing at the message it is about. */
export interface MessageUpdate
  // who reacted, edited or deleted, addressed as an incoming message's sender is
  extends Pick<IncomingItem, 'sessionId' | 'chatId' | 'chatLid' | 'from' | 'fromLid' | 'fromMe' | 'messageTimestamp' | 'receivedAt'> {
  type: 'message.reaction' | 'message.edited' | 'message.deleted';
  /** the network id of the reaction, edit or delete itself */
  waMessageId: string;
  /** a reaction's emoji; '' when the reaction was removed; null on edits and deletes */
  emoji: string | null;
  /** an edit's new text; null otherwise */
  text: string | null;
  /** the message it is about: its network id, always; our record's id when it is a message we sent */
  target: { waMessageId: string; messageId: string | null; chatId: string };
}

/** A vote on one of this session's polls, decrypted (the poll.vote event). */
export interface PollVoteEvent {
  sessionId: string;
  /** our record of the poll */
  messageId: string;
  pollWaMessageId: string;
  /** the network id of the vote itself: a vote delivered again (after a crash before its receipt) carries the same one */
  waMessageId: string;
  /** the chat the poll is in: the person, or the group */
  chatId: string;
  /** the voter: the phone-number JID when known, else the LID JID */
  voter: string;
  voterLid: string | null;
  /** the options chosen now, in the poll's order; [] when the voter withdrew the vote */
  selectedOptions: string[];
  /** when the voter cast it */
  at: string;
  receivedAt: string;
}

/** A message the session's link could not decrypt yet (the message.waiting event); its resend keeps waMessageId. */
export interface MessageWaiting
  // what is known of it: who sent it, in which chat, when; addressed as an incoming message is
  extends Pick<IncomingItem, 'sessionId' | 'chatId' | 'chatLid' | 'from' | 'fromLid' | 'fromMe' | 'messageTimestamp' | 'waMessageId'> {
  /** when the link found it could not decrypt it */
  at: string;
}

/** A contact's presence the session subscribed to (the presence.update event). */
export interface PresenceUpdate {
  sessionId: string;
  /** the chat: the person, or the group they type in */
  chatId: string;
  /** who: the phone-number JID when known, else the LID JID */
  from: string;
  fromLid: string | null;
  presence: 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';
  lastSeen: string | null;
  at: string;
}

/** A session's sending health: paused after rate answers, restricted or banned (the session.health event). */
export interface SessionHealthEvent {
  sessionId: string;
  state: 'ok' | 'paused' | 'restricted' | 'banned';
  reason: string | null;
  pausedUntil: string | null;
  rateAnswers: number;
  queueLength: number;
  at: string;
}

/** A call that rang this session's number (the call.received event). */
export interface CallReceived {
  sessionId: string;
  callId: string;
  /** the caller: the phone-number JID when known, else the LID JID */
  from: string;
  fromLid: string | null;
  groupId: string | null;
  isVideo: boolean;
  /** the network delivered it after the link was back (the call may be over) */
  offline: boolean;
  /** the session's rejectCalls setting rejected it */
  rejected: boolean;
  at: string;
}

/** A stored chat that moved (a message stored either way, a read mark): subscriptions read its row again. */
export interface ChatChange {
  sessionId: string;
  /** the chat as stored, or its LID */
  chatId: string;
}

/** A stored message that is new or changed (a reaction, an edit, a delete): subscriptions read its row again. */
export interface StoredMessageChange {
  sessionId: string;
  chatId: string;
  /** the network id of the stored message */
  waMessageId: string;
  change: 'stored' | 'reaction' | 'edited' | 'deleted' | 'receipt';
}

export type Topics = {
  session: [sessionId: string, payload: SessionEvent];
  incoming: [sessionId: string, payload: IncomingItem];
  messageUpdates: [sessionId: string, payload: MessageUpdate];
  /** the message store's chats and messages (resolvers/conversations.ts) */
  chatUpdates: [sessionId: string, payload: ChatChange];
  storedMessages: [sessionId: string, payload: StoredMessageChange];
  pollVotes: [sessionId: string, payload: PollVoteEvent];
  messageWaiting: [sessionId: string, payload: MessageWaiting];
  presence: [sessionId: string, payload: PresenceUpdate];
  calls: [sessionId: string, payload: CallReceived];
  /** the session.health event (resolvers/pacing.ts) */
  health: [sessionId: string, payload: SessionHealthEvent];
  /** keyed by campaignTopic(accountId, campaignId): progress ids belong to an account */
  campaign: [topic: string, payload: CampaignProgress];
};

/** In-process fan-out for GraphQL subscriptions and long-polls (runtime/events.ts). */
export type EventBus = PubSub<Topics>;
