import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Ownership } from './cluster.ts';
import type { Db } from './db.ts';
import type { Incoming } from './incoming.ts';
import type { Pacer } from './pacer.ts';
import type { Sessions } from './sessions.ts';

export interface MetricSources {
  db: Db;
  sessions: Sessions;
  incoming: Incoming;
  pacer?: Pacer;
  ownership?: Ownership;
}

/**
 * The service's Prometheus metrics (runtime/metrics.ts), in a registry of its own per app instance
 * (tests build many), so nothing lands in prom-client's global registry.
 */
export interface Metrics {
  registry: Registry;
  sends: Counter<'kind' | 'outcome'>;
  rateAnswers: Counter;
  sendSeconds: Histogram<'kind'>;
  incoming: Counter;
  bufferDrops: Counter;
  jobsDue: Counter<'kind'>;
  jobsLate: Counter<'kind'>;
  jobLateness: Histogram<'kind'>;
  webhookAttempts: Counter<'outcome'>;
  webhookSeconds: Histogram;
  /** event sinks (amqp, nats), by sink id: events confirmed by the broker, sent again after a failure, refused or lost with a connection */
  sinkPublished: Counter<'sink'>;
  sinkRetried: Counter<'sink'>;
  sinkFailed: Counter<'sink'>;
  /** seconds since the oldest event waiting for the sink was recorded, on the node publishing it */
  sinkLag: Gauge<'sink'>;
  /** several nodes: requests sent on to the node that owns their session, by outcome */
  forwarded: Counter<'outcome'>;
  /** what the scrape reads from the running service; set once the session manager exists */
  watch: (sources: MetricSources) => void;
}
