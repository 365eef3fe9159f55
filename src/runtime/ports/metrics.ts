import type { Counter, Histogram, Registry } from 'prom-client';
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
  /** several nodes: requests sent on to the node that owns their session, by outcome */
  forwarded: Counter<'outcome'>;
  /** what the scrape reads from the running service; set once the session manager exists */
  watch: (sources: MetricSources) => void;
}
