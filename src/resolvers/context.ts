import type { Logger } from 'pino';
import type { ContactSearch, Db } from '../runtime/ports/db.ts';
import type { EventBus } from '../runtime/ports/events.ts';
import type { Incoming } from '../runtime/ports/incoming.ts';
import type { Jobs } from '../runtime/ports/jobs.ts';
import type { Buttons, RateLimiter } from '../runtime/ports/limits.ts';
import type { MediaFetcher } from '../runtime/ports/media.ts';
import type { Metrics } from '../runtime/ports/metrics.ts';
import type { OutgoingWrites } from '../runtime/ports/outgoing.ts';
import type { Pacer } from '../runtime/ports/pacer.ts';
import type { Ownership } from '../runtime/ports/cluster.ts';
import type { KnownPeople } from '../runtime/ports/network.ts';
import type { Sessions } from '../runtime/ports/sessions.ts';
import type { IncomingMediaFiles, MessageRetentionJob, ReceivedMessages, WaitingMessages } from '../runtime/ports/incoming.ts';
import type { Settings } from '../runtime/settings.ts';
import type { EventSinks } from '../runtime/ports/sinks.ts';
import type { WebhookDelivery, WebhookOutbox } from '../runtime/ports/webhooks.ts';

/** What the domain logic may use, as port types; built once by runtime/root/deps.ts and passed to buildApp. */
export interface Deps {
  db: Db;
  /** the record writes of immediate sends, grouped across concurrent requests */
  outgoing: OutgoingWrites;
  logger: Logger;
  settings: Settings;
  now: () => Date;
  sessions: Sessions;
  events: EventBus;
  incoming: Incoming;
  /** received files: their records, retention and URLs */
  incomingMedia: IncomingMediaFiles;
  /** the message store: every message a session sends and receives, to react to it, quote it, edit or delete it */
  received: ReceivedMessages;
  /** stored messages past their account's retention, deleted hourly (resolvers/retention.ts) */
  messageRetention: MessageRetentionJob;
  /** messages the links could not decrypt yet (message.waiting), until their resend arrives */
  waiting: WaitingMessages;
  fetchMedia: MediaFetcher;
  buttons: Buttons;
  jobs: Jobs;
  /** each session's send pacing, warm-up and back-off (resolvers/pacing.ts) */
  pacer: Pacer;
  /** requests per key in a short window (RATE_LIMIT_*), taken right after the key is checked */
  rateLimit: RateLimiter;
  metrics: Metrics;
  /** the webhook outbox: which endpoints want an event, and the rows that record it */
  webhooks: WebhookOutbox;
  webhookDelivery: WebhookDelivery;
  /** the publisher of the account's event sinks (amqp, nats), fed by the same outbox */
  sinks: EventSinks;
  /** free-text contact search in the database's own dialect */
  searchContacts: ContactSearch;
  /** the LID-phone number pairs the account's sessions have learnt (docs/phone-numbers-and-lids.md) */
  knownPeople: KnownPeople;
  /** which sessions this node links: every one, or (several nodes on PostgreSQL) those it holds a lease on */
  ownership: Ownership;
}

export interface Caller {
  accountId: string;
  email: string;
  /** The key presented with this request; only ever echoed back to its owner. */
  apiKey: string;
  createdAt: Date;
}

/** Set on a REST send that carries an Idempotency-Key (see resolvers/idempotency.ts). */
export interface IdempotencyGate {
  /** Looks at the key: claims it, or ends the request with the answer stored for it, or 409. */
  admit: () => Promise<void>;
  /** the id of the next record the request writes, derived from the key once it is claimed */
  nextRecordId: () => string;
  /** whether this request is the retry of one cut off by a stop, whose records may exist already */
  resumed: () => boolean;
}

/** One per request (REST) or operation (GraphQL). */
export interface RequestContext extends Deps {
  caller: Caller;
  requestId: string;
  idempotency?: IdempotencyGate;
  /** The Idempotency-Key header of a GraphQL request, for its send mutations without an idempotencyKey argument. */
  idempotencyKeyHeader?: string;
}

/** A context for work that runs on its own (jobs), acting for the account that created it. */
export const jobContext = (deps: Deps, accountId: string): RequestContext => ({
  ...deps,
  caller: { accountId, email: '', apiKey: '', createdAt: new Date(0) },
  requestId: `job-${crypto.randomUUID()}`,
});
