import '../node-version.ts';
import './tune-malloc.ts';
import { createAccount, bootstrapAccount } from '../../resolvers/accounts.ts';
import { releaseUnfinished } from '../../resolvers/idempotency.ts';
import { resumeScheduled } from '../../resolvers/scheduling.ts';
import { Redis } from 'ioredis';
import { resumeRecurring } from '../../resolvers/recurring.ts';
import { createPrisma } from '../db/client.ts';
import { demoNotes, SHOWN_ACCOUNTS } from './demo.ts';
import { createDeps } from './deps.ts';
import { networkOptions } from '../network/choose.ts';
import { applyMigrations } from '../db/migrate.ts';
import { holdSingleNode, SecondNodeError } from '../db/single-node.ts';
import { providerOf } from '../db/migrate.ts';
import { PostgresOwnership } from '../cluster/ownership.ts';
import { createEventBus } from '../events.ts';
import { createLogger } from '../logger.ts';
import { giveMemoryBack, startMemoryReclaim } from '../memory-reclaim.ts';
import { demoAllowsPrivate, loadSettings } from '../settings.ts';

const startedAt = new Date();
const settings = loadSettings();
const logger = createLogger(settings.LOG_LEVEL);

const node = await holdSingleNode(settings.DATABASE_URL).catch((err: unknown) => {
  if (!(err instanceof SecondNodeError)) throw err;
  logger.fatal(err.message);
  process.exit(1);
});

await applyMigrations(settings.DATABASE_URL, logger);
const db = await createPrisma(settings.DATABASE_URL);
const network = await networkOptions(settings, logger);
const eventBus = createEventBus(settings.REDIS_URL, logger);
// Fails a command at once while Redis is away, so the rate limit counts in memory meanwhile (rate-limit.ts).
const rateLimitRedis = settings.REDIS_URL
  ? new Redis(settings.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  : undefined;
rateLimitRedis?.on('error', (err) => logger.warn({ err }, 'Redis (rate limits) failed'));
// On PostgreSQL every node holds leases, so a second one can join at any time; SQLite is one node (above).
const cluster =
  providerOf(settings.DATABASE_URL) === 'postgres'
    ? new PostgresOwnership({ db, databaseUrl: settings.DATABASE_URL, logger, ttlMs: settings.CLUSTER_LEASE_TTL_MS })
    : undefined;
const deps = createDeps({ db, logger, settings, target: network.target, events: eventBus.events, ownership: cluster, rateLimitRedis });
// Started once the service has loaded (below), so its first look at the process's size is the size after start.
let stopReclaim: (() => void) | undefined;

// Counted before the bootstrap account is made: its key is the one BOOTSTRAP_API_KEY gave.
const accountsBefore = await db.account.count();
const firstEmails = settings.SANDBOX_EMBEDDED
  ? (await db.account.findMany({ select: { email: true }, orderBy: { createdAt: 'asc' }, take: SHOWN_ACCOUNTS })).map((a) => a.email)
  : [];
await bootstrapAccount(deps, settings.BOOTSTRAP_EMAIL, settings.BOOTSTRAP_API_KEY);
if ((await db.account.count()) === 0) {
  // A brand-new install with no bootstrap settings still gets a usable key, shown this once.
  const account = await createAccount(deps, { email: 'admin@example.com' });
  process.stdout.write(`\nFirst start: created account ${account.email}\nAPI key (shown once, keep it): ${account.apiKey}\n\n`);
}
if (settings.SANDBOX_EMBEDDED) {
  process.stdout.write(
    demoNotes({
      existingAccounts: accountsBefore > 0 ? { count: accountsBefore, first: firstEmails } : null,
      webhooks: { allowed: settings.WEBHOOK_ALLOW_PRIVATE, byDemo: demoAllowsPrivate(settings, 'WEBHOOK_ALLOW_PRIVATE') },
      media: { allowed: settings.MEDIA_ALLOW_PRIVATE, byDemo: demoAllowsPrivate(settings, 'MEDIA_ALLOW_PRIVATE') },
    }),
  );
}

const released = await releaseUnfinished(deps, startedAt);
if (released > 0) logger.info({ keys: released }, 'released Idempotency-Keys whose request was cut off by the stop');

if (cluster) {
  await cluster.start({
    gained: (claims) => {
      const ids = claims.map((c) => c.sessionId);
      // What this node's pacer kept of a session another node sent for since (its warm-up count, its
      // slots) is stale: the session starts afresh here, its day's count read again from the database.
      for (const id of ids) deps.pacer.forget(id);
      void deps.sessions
        .adopt(ids)
        .then(() => resumeScheduled(deps, ids))
        .then(() => resumeRecurring(deps, ids))
        .catch((err: unknown) => logger.error({ err, sessions: ids.length }, 'taking over sessions failed'));
    },
    lost: async (ids) => {
      // Every timer of the sessions goes at once, scheduled and paced sends included: left armed, a job
      // fires here beside the new owner's, claims the record or arms itself again, and holds its chat back.
      // Dropped from the pacer first, so no send of this node takes a new slot for them meanwhile.
      for (const id of ids) deps.pacer.forget(id);
      await Promise.all(ids.map((id) => deps.jobs.disarmSession(id)));
      const pending = await deps.db.outgoingMessage
        .findMany({ where: { sessionId: { in: ids }, status: 'PENDING' }, select: { id: true } })
        .catch((err: unknown) => {
          // Their jobs still end at runDueMessage, which runs none of a session this node does not own.
          logger.warn({ err, sessions: ids.length }, 'reading the queued messages of lost sessions failed');
          return [];
        });
      await deps.jobs.disarmMessages(pending.map((row) => row.id));
      await deps.sessions.release(ids);
      for (const id of ids) deps.pacer.forget(id);
    },
  });
  logger.info({ nodeId: cluster.nodeId, sessions: cluster.owned().length }, 'joined the cluster');
}

const relinking = await deps.sessions.markRelinking();
// The links come back while the HTTP part (Express, GraphQL, REST: most of the modules) loads: the
// network thread starts with the first of them, on the other core.
if (relinking > 0) logger.info({ sessions: relinking }, 're-linking sessions that were connected before the stop');
void deps.sessions.resumeAll().catch((err: unknown) => logger.error({ err }, 're-linking sessions failed'));
const { buildApp } = await import('./app.ts');
const app = buildApp(deps);
app.server.listen(settings.PORT, settings.HOST, async () => {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.PORT;
  if (cluster) {
    const host = settings.HOST === '0.0.0.0' || settings.HOST === '::' ? '127.0.0.1' : settings.HOST;
    await cluster.setAddress(settings.CLUSTER_ADDRESS?.replace(/\/$/, '') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`);
  }
  logger.info({ port, rest: `http://localhost:${port}/v1`, graphql: `http://localhost:${port}/graphql` }, 'listening');
  // A service exists to link numbers: the links' code (about 25 MB) loads now, not when the first QR is
  // asked for, so the first link is as quick as the next (docs/sessions.md).
  deps.sessions
    .prepare()
    .catch((err: unknown) => logger.error({ err }, "loading the links' code failed"))
    .then(() => {
      if (!settings.MEMORY_RECLAIM || stopping) return;
      // Starting (migrations, the modules, the links' code) leaves tens of MB of garbage: given back now,
      // while nothing else runs, rather than at the periodic check's first quiet moment, which a link
      // started meanwhile would have to wait for.
      if (relinking === 0) giveMemoryBack(logger, 'started: memory given back');
      stopReclaim = startMemoryReclaim({ logger });
    })
    .catch((err: unknown) => logger.error({ err }, 'giving back the memory starting left failed'));
  const pending = await resumeScheduled(deps, cluster?.owned());
  if (pending > 0) logger.info({ messages: pending }, 'scheduled messages pending from before the stop');
  const timers = await resumeRecurring(deps, cluster?.owned());
  if (timers > 0) logger.info({ timers }, 'recurring timers armed again from the database');
});

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    logger.error('shutdown timed out; exiting');
    process.exit(1);
  }, settings.SHUTDOWN_TIMEOUT_MS);
  force.unref();
  stopReclaim?.();
  try {
    const closing = app.close();
    deps.incoming.wakeAll();
    await closing;
    await deps.jobs.stop();
    await deps.webhookDelivery.stop();
    await deps.sinks.stop();
    deps.incomingMedia.stop();
    deps.messageRetention.stop();
    await deps.sessions.closeAll();
    await cluster?.stop();
    await deps.outgoing.settled();
    await eventBus.close();
    await rateLimitRedis?.quit().catch(() => undefined);
    await network.close();
    await db.$disconnect();
    await node.release();
    logger.info('stopped');
    process.exit(0);
  } catch (err) {
    logger.error({ err }, 'shutdown failed');
    process.exit(1);
  }
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
