import type { Prisma } from '../../generated/sqlite/client.ts';

export interface EndpointRef {
  id: string;
  events: string[];
  sessionId: string | null;
}

/** What one event adds to the outbox: the event row and one delivery per matching endpoint. */
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
}

export interface OutboxEvent {
  accountId: string;
  sessionId: string | null;
  type: string;
  data: unknown;
}

/** The webhook outbox (runtime/webhooks/outbox.ts): which endpoints want an event, and the rows that record it. */
export interface WebhookOutbox {
  /** Endpoints of the account that want this event; answered from memory while the account's list is fresh. */
  matching: (accountId: string, type: string, sessionId: string | null) => Promise<EndpointRef[]>;
  /** The rows for one event, or null when no endpoint wants it (then nothing is written). */
  rowsFor: (event: OutboxEvent, endpoints?: EndpointRef[]) => Promise<OutboxRows | null>;
  /** The statements that write rows, to run inside the transaction of the change that caused them. */
  writes: (rows: OutboxRows[]) => Array<Prisma.PrismaPromise<unknown>>;
  /** Writes one event on its own (for changes that are not database writes of ours) and wakes the delivery loop. */
  emit: (event: OutboxEvent) => Promise<void>;
  /**
   * The delivery loop registers here; writers call `written` after their transaction commits. The
   * listener is told how many deliveries the rows of `writes` held since, or nothing when that is not
   * known (a replay).
   */
  onWritten: (listener: (deliveries?: number) => void) => void;
  written: () => void;
  /** Forget an account's cached list after one of its endpoints changed. */
  invalidate: (accountId: string) => void;
}

/** The loop that posts outbox rows to endpoints (runtime/jobs/webhook-delivery.ts). */
export interface WebhookDelivery {
  start(): void;
  stop(): Promise<void>;
  wake(): void;
  prune(): Promise<{ deliveries: number; events: number }>;
}
