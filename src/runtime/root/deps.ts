import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Deps } from '../../resolvers/context.ts';
import { handleSendError } from '../../resolvers/delivery.ts';
import { announceReceived, announceWaiting } from '../../resolvers/message-actions.ts';
import { announcePollVote } from '../../resolvers/polls.ts';
import { announceSent } from '../../resolvers/conversations.ts';
import { groupSubject, nameGroupChats } from '../../resolvers/group-names.ts';
import { recordReceipts } from '../../resolvers/receipts.ts';
import { learnLids } from '../../resolvers/contacts.ts';
import { announceChatEvent, ignoresChat } from '../../resolvers/chats.ts';
import type { SessionReceipt } from '../../resolvers/receipts.ts';
import { urlRulesFor } from '../../resolvers/media-urls.ts';
import { runDueMessage, runRecurring } from '../../resolvers/scheduling.ts';
import { linkOpened, networkRefused, pushedBack } from '../../resolvers/pacing.ts';
import { SessionPacer } from '../pacer.ts';
import { searchContacts } from '../db/contact-search.ts';
import { providerOf } from '../db/migrate.ts';
import type { Db } from '../db/client.ts';
import { groupCommit } from '../db/group-commit.ts';
import { runAgainOnConflict } from '../db/raw-writes.ts';
import { createOutgoingWrites } from '../db/outgoing-writes.ts';
import { createEventBus } from '../events.ts';
import { singleNode } from '../cluster/ownership.ts';
import type { Ownership } from '../ports/cluster.ts';
import type { EventBus } from '../ports/events.ts';
import { ButtonGuard } from '../button-guard.ts';
import { IncomingBuffer } from '../incoming-buffer.ts';
import { IncomingMediaStore } from '../incoming-media.ts';
import { MessageStore } from '../message-store.ts';
import { MessageRetention } from '../message-retention.ts';
import { purgeExpiredMessages, storesMessages } from '../../resolvers/retention.ts';
import { RecentWaiting } from '../received-messages.ts';
import { routeLibsignalConsole } from '../libsignal-console.ts';
import { JobScheduler } from '../jobs/scheduler.ts';
import { WebhookDeliveryLoop } from '../jobs/webhook-delivery.ts';
import { SinkPublisher } from '../sinks/publisher.ts';
import { createWebhookOutbox } from '../webhooks/outbox.ts';
import { createMediaFetcher } from '../media-fetch.ts';
import { LATE_AFTER_SECONDS, createMetrics } from '../metrics.ts';
import type { MediaFetchOptions } from '../media-fetch.ts';
import type { NetworkTarget } from '../network/baileys-target.ts';
import { knownPeople } from '../network/known-people.ts';
import { onFirstUse } from '../network/on-first-use.ts';
import { createRemoteNetwork } from '../network/remote-network.ts';
import { SessionManager } from '../network/session-manager.ts';
import { chatStateChanged } from '../../resolvers/conversations.ts';
import { noteHistoryTaken, reportInterruptedHistory, storeHistory } from '../../resolvers/history.ts';
import type { SessionManagerOptions } from '../network/session-manager.ts';
import { createRateLimiter } from '../rate-limit.ts';
import { networkMode } from '../settings.ts';
import type { Settings } from '../settings.ts';

export interface DepsOptions {
  db: Db;
  logger: Logger;
  settings: Settings;
  /** Where the links go: WhatsApp (the default) or a sandbox network. */
  target?: NetworkTarget;
  keepAliveIntervalMs?: number;
  sessionTuning?: Pick<SessionManagerOptions, 'staleAfterMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'lastSeenWriteEveryMs'>;
  now?: () => Date;
  resolveHost?: MediaFetchOptions['resolveHost'];
  /** the event bus (main passes the Redis one when REDIS_URL is set); in-process by default */
  events?: EventBus;
  /** which sessions this node links (several nodes on PostgreSQL); every session by default */
  ownership?: Ownership;
  /** where the nodes share request rate counters (main passes one when REDIS_URL is set); this process's memory by default */
  rateLimitRedis?: Redis;
}

/** The one place the runtime pieces are put together, for main and for tests alike. */
export const createDeps = (options: DepsOptions): Deps => {
  const { db, logger, settings } = options;
  // The sandbox's phones and, with NETWORK_MODE=inline, the links run libsignal on this thread.
  routeLibsignalConsole(logger);
  const events = options.events ?? createEventBus().events;
  const ownership = options.ownership ?? singleNode();
  const now = options.now ?? (() => new Date());
  // The process-wide figures (event-loop lag, heap) only where /metrics is served.
  const metrics = createMetrics({ process: settings.METRICS_TOKEN !== undefined });
  const provider = providerOf(settings.DATABASE_URL);
  const webhooks = createWebhookOutbox({ db, provider, now, cacheMs: settings.WEBHOOK_ENDPOINT_CACHE_MS });
  const sessionAccounts = new Map<string, Promise<string | null>>();
  // A session never changes account, so this is a cache that cannot go stale (a deleted session just stops being asked for).
  const accountOf = (sessionId: string): Promise<string | null> => {
    let found = sessionAccounts.get(sessionId);
    if (!found) {
      found = db.session.findUnique({ where: { id: sessionId }, select: { accountId: true } }).then((s) => s?.accountId ?? null);
      found.catch(() => sessionAccounts.delete(sessionId));
      sessionAccounts.set(sessionId, found);
    }
    return found;
  };
  const incoming = new IncomingBuffer(
    settings.INCOMING_BUFFER_SIZE,
    now,
    (item) => {
      metrics.incoming.inc();
      events.publish('incoming', item.sessionId, item);
    },
    (sessionId, dropped) =>
      logger.warn(
        { sessionId, dropped, bound: settings.INCOMING_BUFFER_SIZE },
        'incoming buffer full: oldest messages dropped (read /incoming with consume, or raise INCOMING_BUFFER_SIZE)',
      ),
  );
  const target = options.target ?? {};
  const history = {
    days: settings.HISTORY_SYNC_DAYS,
    full: settings.HISTORY_SYNC_FULL,
    maxBytes: settings.HISTORY_MAX_BYTES,
    // Between history chunks: a 50,000-message sync grew the heap by 357 MB of garbage without it, 20 MB with
    // a collection per chunk (docs/benchmarks.md, The message store).
    ...(settings.MEMORY_RECLAIM ? { collectEveryBytes: 48 * 1024 * 1024 } : {}),
  };
  const mode = networkMode(settings);
  const network =
    mode !== 'inline'
      ? createRemoteNetwork({
          isolation: mode,
          databaseUrl: settings.DATABASE_URL,
          logger,
          target,
          keepAliveIntervalMs: options.keepAliveIntervalMs,
          deviceListTtlMs: settings.DEVICE_LIST_TTL_MS,
          incomingStoreTimeoutMs: settings.INCOMING_STORE_TIMEOUT_MS,
          notOnNetworkTtlMs: settings.NOT_ON_NETWORK_TTL_MS,
          history,
          // Well inside the watchdog's window when a test shortens it.
          activityEveryMs: options.sessionTuning?.staleAfterMs ? Math.min(5_000, options.sessionTuning.staleAfterMs / 10) : undefined,
          memorySaver: settings.V8_MEMORY_SAVER,
          memoryReclaim: settings.MEMORY_RECLAIM,
        })
      : onFirstUse(async () => {
          const [{ createBaileysNetwork }, { mediaDispatcherFor, socketOptionsFor }] = await Promise.all([
            import('../network/baileys-network.ts'),
            import('../network/baileys-target.ts'),
          ]);
          return createBaileysNetwork({
            db,
            logger,
            socket: socketOptionsFor(target),
            mediaDispatcher: mediaDispatcherFor(target),
            keepAliveIntervalMs: options.keepAliveIntervalMs,
            deviceListTtlMs: settings.DEVICE_LIST_TTL_MS,
            incomingStoreTimeoutMs: settings.INCOMING_STORE_TIMEOUT_MS,
            notOnNetworkTtlMs: settings.NOT_ON_NETWORK_TTL_MS,
            history,
          });
        });
  const waiting = new RecentWaiting();
  const incomingMedia = new IncomingMediaStore({
    db,
    provider,
    logger,
    now,
    retentionMs: settings.INCOMING_MEDIA_RETENTION_MS,
    publicUrl: settings.PUBLIC_URL,
  });
  incomingMedia.start();
  const received = new MessageStore({
    db,
    provider,
    logger,
    now,
    media: incomingMedia,
    statusesAndChannels: settings.STORE_STATUSES_AND_CHANNELS,
    keeps: (sessionId) => storesMessages({ db }, sessionId),
  });
  const messageRetention = new MessageRetention({ purge: () => purgeExpiredMessages({ db, now, logger }), logger });
  messageRetention.start();
  /** Group chats stored without a name ask the network for their subject (resolvers/group-names.ts), off the write's path. */
  const nameGroups = (sessionId: string, chatIds: string[]) => {
    if (!chatIds.some((id) => id.endsWith('@g.us'))) return;
    nameGroupChats({ db, events, sessions, logger }, sessionId, chatIds).catch((err: unknown) =>
      logger.error({ err, sessionId }, 'naming group chats failed'),
    );
  };
  // Two or three receipts follow every sent message: they are written together, at most 20 ms behind,
  // off the send path. Once a batch is stored, its messages and chats are pushed to the subscriptions.
  const writes = createOutgoingWrites(db, settings.DATABASE_URL, logger, webhooks, (marks) => {
    announceSent({ events }, marks);
    for (const mark of marks) nameGroups(mark.sessionId, [mark.chatId]);
  });
  // A batch that lost a deadlock to the SENT marks (PostgreSQL) is read and written again whole.
  const receipts = groupCommit<SessionReceipt>(
    (batch) => runAgainOnConflict(() => recordReceipts({ db, webhooks, outgoing: writes, events }, batch)),
    { delayMs: 20 },
  );
  /** per session, the storing of its latest history chunk, which its chat-state changes wait for */
  const historyStored = new Map<string, Promise<unknown>>();
  const sessions = new SessionManager({
    db,
    logger,
    network,
    events,
    incoming,
    // A resend of a message that was waiting refers to its message.waiting (same waMessageId).
    receive: async (sessionId, message) => {
      const input = await received.receive(sessionId, message);
      const waitingSince = waiting.take(sessionId, message.messageId);
      return waitingSince ? { ...input, waitingSince } : input;
    },
    webhooks,
    // Before the network's receipt for the message (see onIncoming in ports/network.ts).
    // waMessageId: a message the network delivers again (after a crash before its receipt) carries the
    // same one, so a receiver can tell it from a new message.
    onReceived: async (item, message) => {
      const accountId = await accountOf(item.sessionId);
      await announceReceived({ db, webhooks, events }, accountId, item, message);
      await announcePollVote({ db, webhooks, events }, accountId, item, message);
      nameGroups(item.sessionId, [item.chatId]);
    },
    onSendError: (sessionId, waMessageId, reason, code) => {
      handleSendError(deps, sessionId, waMessageId, reason, code).catch((err: unknown) =>
        logger.error({ err, sessionId }, 'recording a refused message failed'),
      );
    },
    onRefused: (sessionId, err) => networkRefused(deps, sessionId, err),
    onBanned: (sessionId, reason) => {
      pushedBack(deps, sessionId, 'banned', reason).catch((err: unknown) =>
        logger.error({ err, sessionId }, 'ending a banned queue failed'),
      );
    },
    onConnected: (sessionId) => {
      linkOpened(deps, sessionId).catch((err: unknown) => logger.error({ err, sessionId }, 'clearing a push-back failed'));
      reportInterruptedHistory({ db, webhooks, logger }, sessionId).catch((err: unknown) =>
        logger.error({ err, sessionId }, 'reporting an interrupted history sync failed'),
      );
    },
    onPeople: (sessionId, people) => {
      accountOf(sessionId)
        .then((accountId) => (accountId ? learnLids(db, accountId, people) : 0))
        .catch((err: unknown) => logger.error({ err, sessionId }, 'recording the LIDs of contacts failed'));
    },
    onChatEvent: (sessionId, event) => {
      if (event.kind === 'history') {
        const stored = storeHistory({ webhooks, messages: received, logger, db, events }, accountOf, sessionId, event).catch(
          (err: unknown) =>
            logger.error({ err, sessionId, syncType: event.syncType, chunkOrder: event.chunkOrder }, 'storing a history sync chunk failed'),
        );
        historyStored.set(sessionId, stored);
        void stored.then(() => {
          if (historyStored.get(sessionId) === stored) historyStored.delete(sessionId);
        });
        return stored;
      }
      if (event.kind === 'history-taken') {
        return noteHistoryTaken({ db, now }, sessionId, event).catch((err: unknown) =>
          logger.error({ err, sessionId, syncType: event.syncType }, 'noting a history sync chunk taken failed'),
        );
      }
      if (event.kind === 'chat-state') {
        // After the history chunk before it is stored: the app state that follows a chunk names its chats.
        const { kind: _kind, ...change } = event;
        void (historyStored.get(sessionId) ?? Promise.resolve())
          .then(() => chatStateChanged({ db, events, now }, sessionId, change))
          .catch((err: unknown) => logger.error({ err, sessionId, chatId: event.chatJid }, 'recording a chat state change failed'));
        return;
      }
      if (event.kind === 'group') {
        groupSubject({ db, events }, sessionId, event.groupJid, event.subject).catch((err: unknown) =>
          logger.error({ err, sessionId, groupJid: event.groupJid }, "naming a group's chat failed"),
        );
        return;
      }
      if (event.kind === 'waiting') {
        announceWaiting({ db, webhooks, events, waiting, logger, now }, accountOf, sessionId, event).catch((err: unknown) =>
          logger.error({ err, sessionId, waMessageId: event.waMessageId }, 'announcing a waiting message failed'),
        );
        return;
      }
      announceChatEvent(deps, sessionId, event).catch((err: unknown) =>
        logger.error({ err, sessionId, kind: event.kind }, 'announcing a presence update or a call failed'),
      );
    },
    ignores: (sessionId, chatId) => ignoresChat({ db }, sessionId, chatId),
    onReceipts: (sessionId, list) => {
      for (const receipt of list) {
        receipts
          .add({ sessionId, receipt })
          .catch((err: unknown) => logger.error({ err, sessionId, waMessageId: receipt.waMessageId }, 'recording a receipt failed'));
      }
    },
    relinkConcurrency: settings.RELINK_CONCURRENCY,
    ownership: ownership.clustered ? ownership : undefined,
    ...options.sessionTuning,
  });
  const fetchMedia = createMediaFetcher({
    maxBytes: settings.MEDIA_MAX_BYTES,
    timeoutMs: settings.MEDIA_FETCH_TIMEOUT_MS,
    allowPrivate: settings.MEDIA_ALLOW_PRIVATE,
    urlRules: urlRulesFor('MEDIA_ALLOW_PRIVATE'),
    resolveHost: options.resolveHost,
  });
  const buttons = new ButtonGuard(settings.BUTTONS_ENABLED, settings.BUTTONS_FAILURE_THRESHOLD, settings.BUTTONS_COOLDOWN_MS);
  const jobs: JobScheduler = new JobScheduler(
    logger,
    async (job) => {
      if (job.kind === 'message') {
        const retryAt = await runDueMessage(deps, job.messageId);
        if (retryAt) await jobs.scheduleMessage(randomUUID(), job.messageId, retryAt);
        return;
      }
      await runRecurring(deps, job.timerId);
    },
    () => now().getTime(),
  );
  jobs.onDueJob = (kind, lateMs) => {
    metrics.jobsDue.inc({ kind });
    if (lateMs === undefined) return;
    metrics.jobLateness.observe({ kind }, Math.max(0, lateMs) / 1000);
    if (lateMs > LATE_AFTER_SECONDS * 1000) metrics.jobsLate.inc({ kind });
  };
  const pacer = new SessionPacer({
    enabled: settings.SEND_PACING === 'on',
    backoffBaseMs: settings.PACING_BACKOFF_BASE_MS,
    backoffMaxMs: settings.PACING_BACKOFF_MAX_MS,
    backoffResetMs: settings.PACING_BACKOFF_RESET_MS,
  });
  metrics.watch({ db, sessions, incoming, pacer, ownership });
  // Receipts are writes to outgoing records too: readers (and shutdown) wait for them as for the marks.
  const outgoing = {
    ...writes,
    settled: async () => {
      await writes.settled();
      await receipts.settled();
    },
  };
  const rateLimit = createRateLimiter(settings.RATE_LIMIT_REQUESTS, settings.RATE_LIMIT_WINDOW_S, options.rateLimitRedis);
  const webhookDelivery = new WebhookDeliveryLoop({
    db,
    logger,
    outbox: webhooks,
    databaseUrl: settings.DATABASE_URL,
    now,
    concurrency: settings.WEBHOOK_CONCURRENCY,
    timeoutMs: settings.WEBHOOK_TIMEOUT_MS,
    retryBaseMs: settings.WEBHOOK_RETRY_BASE_MS,
    retryMaxMs: settings.WEBHOOK_RETRY_MAX_MS,
    retryForMs: settings.WEBHOOK_RETRY_FOR_MS,
    allowPrivate: settings.WEBHOOK_ALLOW_PRIVATE,
    urlRules: urlRulesFor('WEBHOOK_ALLOW_PRIVATE'),
    resolveHost: options.resolveHost,
    pollMs: settings.WEBHOOK_POLL_MS,
    retentionMs: settings.WEBHOOK_RETENTION_MS,
    onAttempt: (outcome, seconds) => {
      metrics.webhookAttempts.inc({ outcome });
      metrics.webhookSeconds.observe(seconds);
    },
  });
  webhookDelivery.start();
  const sinks = new SinkPublisher({
    db,
    logger,
    provider,
    outbox: webhooks,
    now,
    pollMs: settings.SINK_POLL_MS,
    leaseMs: settings.SINK_LEASE_MS,
    retryBaseMs: settings.SINK_RETRY_BASE_MS,
    retryMaxMs: settings.SINK_RETRY_MAX_MS,
    batch: settings.SINK_BATCH,
    metrics: {
      published: (sink, n) => metrics.sinkPublished.inc({ sink }, n),
      retried: (sink, n) => metrics.sinkRetried.inc({ sink }, n),
      failed: (sink, n) => metrics.sinkFailed.inc({ sink }, n),
      lag: (sink, seconds) => metrics.sinkLag.set({ sink }, seconds),
      forget: (sink) => metrics.sinkLag.remove({ sink }),
    },
  });
  sinks.start();
  const deps: Deps = {
    db,
    outgoing,
    logger,
    settings,
    now,
    sessions,
    events,
    incoming,
    incomingMedia,
    received,
    messageRetention,
    waiting,
    fetchMedia,
    buttons,
    jobs,
    pacer,
    rateLimit,
    metrics,
    webhooks,
    webhookDelivery,
    sinks,
    searchContacts: (client, query) => searchContacts(client, provider, query),
    knownPeople: (accountId, jids) => knownPeople(db, accountId, jids),
    ownership,
  };
  return deps;
};
