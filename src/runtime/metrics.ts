import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricSources, Metrics } from './ports/metrics.ts';
import type { Ownership } from './ports/cluster.ts';

const PREFIX = 'wa_';

const STATUSES = ['DISCONNECTED', 'CONNECTING', 'QR_READY', 'CONNECTED', 'PAUSED'] as const;
/** a scheduled job that fires this much after its time counts as late */
export const LATE_AFTER_SECONDS = 1;

/** `process`: the Node.js default metrics (event-loop lag, the main thread's heap, CPU...); one registry per process should take them. */
export const createMetrics = (options: { process: boolean }): Metrics => {
  const registry = new Registry();
  if (options.process) collectDefaultMetrics({ register: registry, prefix: PREFIX });
  let sources: MetricSources | undefined;
  let dropsSeen = 0;
  const registers = [registry];
  // prom-client reports external memory but not the part of it held by ArrayBuffers and Buffers
  // (sockets' and SQLite's buffers, media): what tells a leak of buffers from other native memory.
  if (options.process)
    new Gauge({
      name: `${PREFIX}nodejs_array_buffers_bytes`,
      help: "Memory of the main thread's ArrayBuffers and Buffers (part of nodejs_external_memory_bytes)",
      registers,
      collect() {
        this.set(process.memoryUsage().arrayBuffers);
      },
    });

  new Gauge({
    name: `${PREFIX}sessions`,
    help: 'Sessions by status (the live link status, else the stored one)',
    labelNames: ['status'],
    registers,
    async collect() {
      if (!sources) return;
      const { db, sessions } = sources;
      const counts = new Map<string, number>(STATUSES.map((s) => [s, 0]));
      for (const row of await db.session.findMany({ select: { id: true, status: true } })) {
        const status = sessions.view(row.id)?.status ?? row.status;
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
      this.reset();
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });
  // The names say thread for dashboards made when the links ran on one; they describe the network process too.
  new Gauge({
    name: `${PREFIX}network_thread_heap_used_bytes`,
    help: 'V8 heap used by the network process or thread (Baileys and its links); absent with NETWORK_MODE=inline',
    registers,
    async collect() {
      this.reset();
      const stats = await sources?.sessions.networkStats();
      if (stats) this.set(stats.heapUsedBytes);
    },
  });
  new Gauge({
    name: `${PREFIX}network_thread_heap_total_bytes`,
    help: 'V8 heap size of the network process or thread; absent with NETWORK_MODE=inline',
    registers,
    async collect() {
      this.reset();
      const stats = await sources?.sessions.networkStats();
      if (stats) this.set(stats.heapTotalBytes);
    },
  });
  new Gauge({
    name: `${PREFIX}network_process_resident_memory_bytes`,
    help: "Resident memory of the network process (the service's own is process_resident_memory_bytes); present with NETWORK_MODE=process once a session has linked",
    registers,
    async collect() {
      this.reset();
      const stats = await sources?.sessions.networkStats();
      if (stats?.process) this.set(stats.process.rssBytes);
    },
  });

  new Gauge({
    name: `${PREFIX}sessions_send_paused`,
    help: 'Sessions whose sending is paused after the network answered rate-overlimit',
    registers,
    collect() {
      this.set(sources?.pacer?.stats().paused ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}send_queue_waiting`,
    help: 'Paced sends waiting for their slot in this process',
    registers,
    collect() {
      this.set(sources?.pacer?.stats().waiting ?? 0);
    },
  });
  // Several nodes (issue 34): what this node holds, and how its leases fare.
  new Gauge({
    name: `${PREFIX}cluster_sessions_owned`,
    help: 'Sessions this node holds a lease on (several nodes on PostgreSQL); absent on a single node',
    labelNames: ['node'],
    registers,
    collect() {
      this.reset();
      const ownership = sources?.ownership;
      if (ownership?.clustered) this.set({ node: ownership.nodeId }, ownership.owned()?.length ?? 0);
    },
  });
  /** A counter that follows one of the ownership's running totals (it counts; the counter shows what it added). */
  const leaseCounter = (name: string, help: string, total: (counts: Ownership['counts']) => number) => {
    let seen = 0;
    new Counter({
      name: `${PREFIX}${name}`,
      help,
      registers,
      collect() {
        const counts = sources?.ownership?.counts;
        const now = counts ? total(counts) : 0;
        if (now > seen) this.inc(now - seen);
        seen = now;
      },
    });
  };
  leaseCounter(
    'cluster_lease_renewals_total',
    'Session leases this node renewed (one per owned session every third of CLUSTER_LEASE_TTL_MS)',
    (c) => c.renewals,
  );
  leaseCounter(
    'cluster_lease_handovers_total',
    'Sessions this node handed over on purpose: to a node that joined (balance), or at shutdown',
    (c) => c.handovers,
  );
  leaseCounter(
    'cluster_lease_losses_total',
    'Sessions this node lost: another node claimed them, or it could not renew in time and closed their links',
    (c) => c.losses,
  );

  return {
    registry,
    rateAnswers: new Counter({
      name: `${PREFIX}rate_answers_total`,
      help: 'Rate-overlimit answers the network gave to sends (error acks 429 and usync 429)',
      registers,
    }),
    sends: new Counter({
      name: `${PREFIX}sends_total`,
      help: 'Messages sent, by kind and outcome (sent, failed: the network refused it, not_connected, not_on_network: the recipient is not on the network, refused_after_send: an error ack after the send answered)',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    sendSeconds: new Histogram({
      name: `${PREFIX}send_duration_seconds`,
      help: 'Time for the network to take a message (from handing it to the link to its answer)',
      labelNames: ['kind'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    incoming: new Counter({ name: `${PREFIX}incoming_messages_total`, help: 'Messages received by all sessions', registers }),
    bufferDrops: new Counter({
      name: `${PREFIX}incoming_buffer_drops_total`,
      help: 'Incoming messages dropped unread because a session buffer was full (INCOMING_BUFFER_SIZE)',
      registers,
      collect() {
        const total = sources?.incoming.droppedTotal ?? 0;
        if (total > dropsSeen) this.inc(total - dropsSeen);
        dropsSeen = total;
      },
    }),
    jobsDue: new Counter({
      name: `${PREFIX}scheduled_jobs_due_total`,
      help: 'Scheduled jobs that came due, by kind (message, recurring)',
      labelNames: ['kind'],
      registers,
    }),
    jobsLate: new Counter({
      name: `${PREFIX}scheduled_jobs_late_total`,
      help: `Scheduled messages that fired more than ${LATE_AFTER_SECONDS} s after their time (after a restart, or a busy process)`,
      labelNames: ['kind'],
      registers,
    }),
    jobLateness: new Histogram({
      name: `${PREFIX}scheduled_job_lateness_seconds`,
      help: 'How long after its time a scheduled message fired',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300],
      registers,
    }),
    webhookAttempts: new Counter({
      name: `${PREFIX}webhook_attempts_total`,
      help: 'Webhook delivery attempts, by outcome (delivered: a 2xx answer; failed: anything else, retried later)',
      labelNames: ['outcome'],
      registers,
    }),
    webhookSeconds: new Histogram({
      name: `${PREFIX}webhook_attempt_duration_seconds`,
      help: 'How long a webhook receiver took to answer (or the timeout)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    sinkPublished: new Counter({
      name: `${PREFIX}sink_published_total`,
      help: "Events an event sink's broker confirmed, by sink id",
      labelNames: ['sink'],
      registers,
    }),
    sinkRetried: new Counter({
      name: `${PREFIX}sink_retried_total`,
      help: "Events sent again to an event sink's broker after a failed publish, by sink id",
      labelNames: ['sink'],
      registers,
    }),
    sinkFailed: new Counter({
      name: `${PREFIX}sink_failed_total`,
      help: "Events a publish to an event sink's broker did not get confirmed (refused, or lost with a connection; they wait and are sent again), by sink id",
      labelNames: ['sink'],
      registers,
    }),
    sinkLag: new Gauge({
      name: `${PREFIX}sink_lag_seconds`,
      help: 'Age of the oldest event waiting for an event sink (0: none waits), on the node publishing for it, by sink id',
      labelNames: ['sink'],
      registers,
    }),
    forwarded: new Counter({
      name: `${PREFIX}cluster_forwarded_requests_total`,
      help: 'Requests sent on to the node that owns their session, by outcome (forwarded; unavailable: no owner reachable, answered 409 with Retry-After)',
      labelNames: ['outcome'],
      registers,
    }),
    watch: (given) => {
      sources = given;
    },
  };
};
