import type { Prisma } from '../../generated/sqlite/client.ts';

export interface EndpointRef {
  id: string;
  events: string[];
  sessionId: string | null;
  /** an event sink (amqp, nats: runtime/sinks) instead of a webhook endpoint */
  sink?: boolean;
}

/** What one event adds to the outbox: one delivery row per matching endpoint, each with the event's type and data. */
export interface OutboxRows {
  event: { id: string; accountId: string; sessionId: string | null; type: string; data: string; createdAt: Date };
  deliveries: Array<{
    id: string;
    eventId: string;
    endpointId: string;
    accountId: string;
    sessionId: string | null;
    nextAttemptAt: Date;
    createdAt: Date;
  }>;
  /** one row per matching event sink (runtime/sinks), published by the node that holds the sink */
  sinkDeliveries?: Array<{ id: string; sinkId: string }>;
  /** written once: its event id comes from OutboxEvent.once, and a second write of it adds nothing */
  once?: true;
}

export interface OutboxEvent {
  accountId: string;
  sessionId: string | null;
  type: string;
  data: unknown;
  /**
   * An event about something the network may hand over again (a received message delivered again to the
   * next owner after a planned move, before the old one's receipt went out): its id is derived from `key`
   * and `at` (the network's seconds, the same on every delivery), so the second write of it adds no row
   * and the receiver sees one webhook-id. Only through `emit`, which knows which rows were new.
   */
  once?: { key: string; at: number };
}

/**
 * The delivery loop of this node, offered the deliveries written here: those it takes are written already
 * claimed by it (a lease, as a claim would) and go straight to its queues once their transaction
 * committed, without a claim statement. Those it does not take are written unclaimed, for any node.
 */
export interface WebhookHandoff {
  /**
   * The lease to write these deliveries with, or null when the loop does not take them now: it then holds
   * back what is written after them until a claim has taken them, so each session's order is kept.
   */
  accepts: (deliveries: Array<{ id: string; endpointId: string; sessionId: string | null }>) => Date | null;
  /** rows written with that lease, after their transaction committed */
  take: (rows: OutboxRows[]) => void;
  /** an endpoint of this account changed here */
  invalidate: (accountId: string) => void;
}

/** The webhook outbox (runtime/webhooks/outbox.ts): which endpoints want an event, and the rows that record it. */
export interface WebhookOutbox {
  /** Endpoints and event sinks of the account that want this event; answered from memory while the account's lists are fresh. */
  matching: (accountId: string, type: string, sessionId: string | null) => Promise<EndpointRef[]>;
  /** The rows for one event, or null when no endpoint wants it (then nothing is written). */
  rowsFor: (event: OutboxEvent, endpoints?: EndpointRef[]) => Promise<OutboxRows | null>;
  /** The statements that write rows, to run inside the transaction of the change that caused them. */
  writes: (rows: OutboxRows[]) => Array<Prisma.PrismaPromise<unknown>>;
  /** The same statements as raw SQL, for a transaction of raw statements (RawWrites); the same once-per-row rules as `writes`. */
  writeSql: (rows: OutboxRows[]) => Prisma.Sql[];
  /** Writes one event on its own (for changes that are not database writes of ours) and wakes the delivery loop. */
  emit: (event: OutboxEvent) => Promise<void>;
  /**
   * The delivery loop registers here; writers call `written` with the rows of `writes` after their
   * transaction commits (without rows after other changes to deliveries, a replay). The listener is told
   * the ids of the deliveries written unclaimed, or nothing when that is not known.
   */
  onWritten: (listener: (unclaimedIds?: string[]) => void) => void;
  written: (rows?: OutboxRows[]) => void;
  /** the sink publisher registers here: told which sinks got rows once their transaction committed */
  onSinkRows: (listener: (sinkIds: string[]) => void) => void;
  /** the delivery loop offers to take what is written here (see WebhookHandoff) */
  handoff: (loop: WebhookHandoff) => void;
  /** Forget an account's cached lists after one of its endpoints or sinks changed. */
  invalidate: (accountId: string) => void;
}

/** The loop that posts outbox rows to endpoints (runtime/jobs/webhook-delivery.ts). */
export interface WebhookDelivery {
  start(): void;
  stop(): Promise<void>;
  wake(): void;
  prune(): Promise<{ deliveries: number }>;
}
