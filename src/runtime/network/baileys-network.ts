import './libsignal-fix.ts';
import NodeCache from '@cacheable/node-cache';
import { historyChatStates, isOwn, resumeFirstAppStateSync, watchChatStates } from './baileys-chat-state.ts';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { ReadableStream as WebReadableStream } from 'node:stream/web';
import makeWASocket, {
  Browsers,
  DisconnectReason,
  downloadContentFromMessage,
  generateMessageIDV2,
  jidNormalizedUser,
  proto,
} from 'baileys';
import type { BaileysEventMap, CacheStore, UserFacingSocketConfig, WAMessage, WAMessageKey, WASocket } from 'baileys';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Db } from '../db/client.ts';
import { batchedCredsReader, clearAuthState, loadAuthState } from './auth-store.ts';
import type { StoredAuthState } from './auth-store.ts';
import { toIncoming, waitingOf } from './baileys-incoming.ts';
import type { OwnAddresses } from './baileys-incoming.ts';
import { pollVoteOf } from './baileys-polls.ts';
import { baileysLogger } from './baileys-logger.ts';
import { completePerson, personOf, shownAddress, storedLidBook } from './baileys-lids.ts';
import type { LidBook, Person } from './baileys-lids.ts';
import { BoundedSet } from './bounded-set.ts';
import { baileysChats } from './baileys-chats.ts';
import { baileysGroups, GroupCache } from './baileys-groups.ts';
import { reactThrough, revokeThrough, sendStatusThrough, sendThrough } from './baileys-outgoing.ts';
import { KnownUsers, NOT_ON_NETWORK_TTL_MS, reachFor } from './baileys-reach.ts';
import { receiptsFromUpdates, receiptsFromUpserts, receiptsFromUserReceipts } from './baileys-receipts.ts';
import { signalRepositoryFor } from './baileys-signal.ts';
import { deviceListCache } from './baileys-target.ts';
import { MediaGoneError } from './media-gone.ts';
import { heapGrowthCollector } from '../memory-reclaim.ts';
import type { MediaLocator, ReceivedMessage } from '../ports/incoming.ts';
import type {
  ChatEvent,
  CloseKind,
  HistorySettings,
  HistorySyncKind,
  KnownPerson,
  LinkCallbacks,
  Network,
  NetworkLink,
  OpenOptions,
  Receipt,
  SendResult,
} from '../ports/network.ts';

export interface BaileysNetworkOptions {
  db: Db;
  logger: Logger;
  /** Extra socket options, e.g. the sandbox's URL and media agent. */
  socket?: Partial<UserFacingSocketConfig>;
  keepAliveIntervalMs?: number;
  /** how long Baileys trusts a contact's device list (its own default: 5 minutes) */
  deviceListTtlMs?: number;
  /** what received files are fetched through (the sandbox's trusted media host); the default otherwise */
  mediaDispatcher?: Dispatcher;
  /** how long a received message waits for the service's write before it is left unreceipted (default 30 s) */
  incomingStoreTimeoutMs?: number;
  /** how long a user the network said it does not know is believed absent before a send asks again (default 60 s) */
  notOnNetworkTtlMs?: number;
  /** history sync from the phone; off when not given */
  history?: HistorySettings;
}

const INCOMING_STORE_TIMEOUT_MS = 30_000;

/**
 * What patches/ changes in Baileys (applied by postinstall), each found by a line only the patched file
 * has: without the receipt hook a crash could lose received messages; without the media fix a media
 * host failing midway would end the network worker.
 */
const PATCHED = [
  { file: ['Socket', 'messages-recv.js'], marker: 'config.beforeReceipt', what: 'no beforeReceipt hook' },
  { file: ['Utils', 'messages-media.js'], marker: "fetched.on('error'", what: "the media body's errors are not forwarded" },
  { file: ['Socket', 'chats.js'], marker: 'config.beforeHistoryChunk', what: 'no beforeHistoryChunk hook' },
];

/**
 * The socket options the patch adds, typed here rather than in Baileys' declarations. beforeReceipt
 * (Socket/messages-recv.js): awaited for each decrypted message in arrival order, inside the link's
 * message mutex; its `stored` is awaited after the mutex, before the delivery receipt (or ack), and the
 * receipts and upserts keep the arrival order; a rejection of either sends a nack instead.
 * beforeHistoryChunk (Socket/chats.js): awaited with a history notification before it is downloaded and
 * decoded (after its receipt); never rejects.
 */
type PatchedSocketConfig = UserFacingSocketConfig & {
  beforeReceipt: (msg: WAMessage) => Promise<{ stored: Promise<void> } | undefined>;
  beforeHistoryChunk: (notification: proto.Message.IHistorySyncNotification) => Promise<unknown>;
};

const assertPatched = (() => {
  let checked = false;
  return () => {
    if (checked) return;
    const root = dirname(createRequire(import.meta.url).resolve('baileys'));
    for (const { file, marker, what } of PATCHED) {
      const path = join(root, ...file);
      if (!readFileSync(path, 'utf8').includes(marker)) {
        throw new Error(`Baileys is not patched (${path}: ${what}): run npm install, which applies patches/ with patch-package`);
      }
    }
    checked = true;
  };
})();

/** Rejects when `work` takes longer than `ms`; the timer goes either way. */
const within = async <T>(work: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
        // A wait for a socket that is closing keeps no process alive.
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

/** Baileys' own limit (`maxMsgRetryCount`) on answering one message's retry receipts. */
const MAX_RESENDS = 5;

export const UNDECRYPTABLE_REASON = "the recipient's device could not decrypt the message, even after it was sent again";

/**
 * Baileys' `msgRetryCounterCache`: how often each message was asked for again, by `<id>:<participant>`.
 * Baileys counts a recipient's retry receipts here and stops resending once the count reaches its
 * limit; that moment is when a message is known to be undeliverable, so it is reported then.
 */
class RetryCounts implements CacheStore {
  private readonly cache = new NodeCache({ stdTTL: 60 * 60, useClones: false, checkperiod: 120 });

  constructor(private readonly onGiveUp: (waMessageId: string) => void) {}

  get<T>(key: string): T | undefined {
    return this.cache.get(key) as T | undefined;
  }

  set<T>(key: string, value: T): boolean {
    if (typeof value === 'number' && value >= MAX_RESENDS) this.onGiveUp(key.split(':')[0] ?? key);
    return this.cache.set(key, value);
  }

  del(key: string): number {
    return this.cache.del(key);
  }

  flushAll(): void {
    this.cache.flushAll();
  }

  close(): void {
    this.cache.close();
  }
}

const BANNED_TEMPORARILY = 402;
const BANNED_406 = 406;

/** What a ban's login failure says, for the session's lastError: rc14 keeps the failure's attributes as the error's data. */
const banMessage = (error: Error | undefined): string => {
  const status = (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
  const data = (error as { data?: { expire?: string; code?: string } } | undefined)?.data;
  if (status === BANNED_TEMPORARILY) {
    const seconds = Number(data?.expire ?? 0);
    return `The network banned this number for a time (failure 402${data?.code ? `, code ${data.code}` : ''})${seconds > 0 ? `; it ends in about ${seconds} s` : ''}. Connect again once it has ended`;
  }
  return `The network banned this number (failure ${status ?? 'unknown'}); the session cannot log in`;
};

const closeKindOf = (error: Error | undefined, registered: boolean): CloseKind => {
  // Baileys closes with Boom errors; their status code says why.
  const status = (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
  switch (status) {
    case DisconnectReason.restartRequired:
      return 'restart';
    case DisconnectReason.forbidden:
    case BANNED_TEMPORARILY:
    case BANNED_406:
      // rc14 reports the login's <failure reason=…> as the status; 403 and 406 are bans, 402 a ban for a time.
      return error?.message === 'Connection Failure' ? 'banned' : status === DisconnectReason.forbidden ? 'loggedOut' : 'transient';
    case DisconnectReason.loggedOut:
    case DisconnectReason.badSession:
    case DisconnectReason.multideviceMismatch:
      return 'loggedOut';
    case DisconnectReason.connectionReplaced:
      return 'replaced';
    case DisconnectReason.timedOut:
      return !registered && error?.message.includes('QR refs') ? 'qrExpired' : 'transient';
    default:
      return 'transient';
  }
};

const statusOf = (err: unknown): number | undefined => (err as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;

/** Fetches a received file from the media host and decrypts it as it streams. */
export const downloadReceivedMedia = async (media: MediaLocator, dispatcher?: Dispatcher): Promise<ReadableStream<Uint8Array>> => {
  try {
    const stream = await downloadContentFromMessage(
      { mediaKey: Buffer.from(media.mediaKey, 'base64'), directPath: media.directPath ?? null, url: media.url ?? null },
      media.mediaType,
      // fetch takes undici's dispatcher, which RequestInit does not declare
      dispatcher ? { options: { dispatcher } as RequestInit } : {},
    );
    // Baileys pipes the fetched body into its decipher (this stream), and (patched) destroys the decipher
    // with the body's error when the media host fails midway. A reader that goes away destroys the
    // decipher, which only unpipes the body: the fetch would stay open, paused, for ever. Destroyed too,
    // it closes the connection (the error listener keeps its abort from being an uncaught error).
    stream.once('unpipe', (body: Readable) => {
      body.on('error', () => undefined);
      body.destroy();
    });
    // The async iterator below listens for errors only from the first read, which the main side asks
    // for a moment later: a failure before then (the media host dropping the connection right after
    // its headers) would be an uncaught error that ends the network worker. The stream keeps the
    // error, and the first read rejects with it.
    stream.on('error', () => undefined);
    // Pulled through the stream's async iterator rather than Readable.toWeb, whose 'data' handler can
    // enqueue into a cancelled stream and throw where nothing catches it (nodejs/node#64529).
    return WebReadableStream.from<Uint8Array>(stream) as ReadableStream<Uint8Array>;
  } catch (err) {
    const status = statusOf(err);
    if (status === 404 || status === 410) throw new MediaGoneError(`HTTP ${status}`);
    // fetch's own message is only "fetch failed"; what failed is in its cause (only the message crosses to the main side)
    const cause = (err as { cause?: unknown } | undefined)?.cause;
    if (err instanceof Error && cause instanceof Error) throw new Error(`${err.message}: ${cause.message}`, { cause: err });
    throw err;
  }
};

/** The last sends of a link, by network id, for answering retry receipts until their SENT marks are written. */
const RECENT_SENDS = 64;

const remember = <K, V>(map: Map<K, V>, key: K, value: V): void => {
  map.delete(key);
  map.set(key, value);
  if (map.size > RECENT_SENDS) map.delete(map.keys().next().value as K);
};

export const createBaileysNetwork = (options: BaileysNetworkOptions): Network => {
  const { db, logger } = options;

  // The store of each session's latest link: its key writes wait in memory for a moment.
  const stores = new Map<string, StoredAuthState>();
  // Which users each session found on the network, or not: kept across its links.
  const knownUsers = new Map<string, KnownUsers>();
  const knownUsersOf = (sessionId: string): KnownUsers => {
    let known = knownUsers.get(sessionId);
    if (!known) {
      known = new KnownUsers(options.notOnNetworkTtlMs ?? NOT_ON_NETWORK_TTL_MS);
      knownUsers.set(sessionId, known);
    }
    return known;
  };
  const readCreds = batchedCredsReader(db);

  assertPatched();
  const storeTimeoutMs = options.incomingStoreTimeoutMs ?? INCOMING_STORE_TIMEOUT_MS;

  const history = options.history ?? { days: 0, full: false, maxBytes: 0 };
  const open = async (sessionId: string, callbacks: LinkCallbacks, openOptions: OpenOptions = {}): Promise<NetworkLink> => {
    const log = logger.child({ sessionId });
    // Messages stored before their receipt, by network id: the messages.upsert that follows each is skipped.
    const storedFirst = new BoundedSet(1024);
    /** the history chunks handed to the service so far, stored (beforeHistoryChunk waits for them) */
    let historyHandled: Promise<unknown> = Promise.resolve();
    const collectBetweenChunks = history.collectEveryBytes ? heapGrowthCollector(history.collectEveryBytes) : undefined;
    await stores.get(sessionId)?.flush();
    // Set once the socket exists; Baileys writes nothing before then.
    let closeFenced: (() => void) | undefined;
    let firstSync: { historyTaken: () => void } | undefined;
    const { fence } = openOptions;
    const auth = await loadAuthState(db, sessionId, log, readCreds, fence ? { fence, onFenced: () => closeFenced?.() } : undefined);
    stores.set(sessionId, auth);
    const groupCache = new GroupCache();
    const retries = new RetryCounts((waMessageId) => callbacks.onSendError(waMessageId, UNDECRYPTABLE_REASON));
    // Baileys is chatty: its own logs at warn and above, unless ours ask for less (or for tracing).
    const chatty = log.child(
      { module: 'baileys' },
      { level: log.isLevelEnabled('trace') ? 'debug' : log.isLevelEnabled('warn') ? 'warn' : log.level },
    );
    const config: PatchedSocketConfig = {
      // The store keeps recent keys in memory itself (see auth-store.ts).
      auth: auth.state,
      logger: baileysLogger(log.child({ module: 'baileys' }), chatty),
      browser: Browsers.ubuntu('Chrome'),
      markOnlineOnConnect: false,
      fireInitQueries: true,
      keepAliveIntervalMs: options.keepAliveIntervalMs ?? 30_000,
      cachedGroupMetadata: async (jid) => groupCache.get(jid),
      // Received messages decrypted in turn with the sends (see baileys-signal.ts).
      makeSignalRepository: signalRepositoryFor(auth.state.creds),
      maxMsgRetryCount: MAX_RESENDS,
      msgRetryCounterCache: retries,
      // A recipient that cannot decrypt a message asks for it again (a retry receipt): Baileys answers
      // from its cache of the last 512 sends, else from here, with exactly what went out.
      getMessage: async (key) => (key.id ? sentMessage(key.id) : undefined),
      // Baileys tells the network a message arrived (after which it is never delivered again) before it
      // emits messages.upsert; so a received message is stored here first (the patch in patches/). A
      // rejection, or a write slower than the timeout, makes Baileys nack the message instead. The hand-over
      // is in order inside the link's message mutex; the write is awaited after it, so the messages that
      // arrive meanwhile are decrypted and share the store's transaction.
      beforeReceipt: async (msg) => {
        const handed = await handOver(msg);
        if (!handed) return undefined;
        const stored = within(handed.stored, storeTimeoutMs, 'storing a received message').then(() => {
          if (msg.key.id) storedFirst.add(msg.key.id);
        });
        // Baileys awaits it once the receipts before it are sent: a failure meanwhile is not unhandled.
        stored.catch(() => undefined);
        return { stored };
      },
      // The next chunk is downloaded and decoded once the service has stored the ones handed over before:
      // a phone's history (tens of thousands of messages) would otherwise be held in memory at once while
      // the store caught up.
      beforeHistoryChunk: async (notification) => {
        firstSync?.historyTaken();
        // Noted as soon as it is taken (its receipt is sent): a stop from here until it is stored loses the
        // chunk, and the next start reports it.
        try {
          await callbacks.onChatEvent?.({
            kind: 'history-taken',
            syncType: SYNC_KINDS[notification.syncType ?? -1] ?? 'other',
            chunkOrder: notification.chunkOrder ?? null,
          });
        } catch (err) {
          log.error({ err }, 'noting a history sync chunk taken failed');
        }
        await historyHandled;
        collectBetweenChunks?.();
      },
      ...(options.deviceListTtlMs ? { userDevicesCache: deviceListCache(options.deviceListTtlMs) } : {}),
      ...options.socket,
      // After the target's options, which turn history off for hand-made sandbox sockets.
      syncFullHistory: history.full,
      shouldSyncHistoryMessage: (notification) => wantsHistory(history, notification, log),
    };
    const sock: WASocket = makeWASocket(config);
    firstSync = resumeFirstAppStateSync(sock, auth.state.creds, log);
    let closed = false;
    closeFenced = () => {
      if (closed) return;
      closed = true;
      retries.close();
      void sock.end(undefined);
      callbacks.onClose('fenced', "another node holds the session: the database refused this link's Signal key write");
    };
    // A retry receipt can come before the SENT mark (which keeps the message) is written, and from the
    // recipient's LID while Baileys' own cache keys the message by the number it was sent to. Votes on
    // a poll are decrypted with the secret the poll went out with.
    const sentMessage = async (waMessageId: string): Promise<proto.IMessage | undefined> => {
      const recent = await recentSends.get(waMessageId);
      if (recent?.message) return proto.Message.decode(recent.message);
      const row = await db.outgoingMessage.findFirst({ where: { sessionId, waMessageId }, select: { sentMessage: true } });
      return row?.sentMessage ? proto.Message.decode(Buffer.from(row.sentMessage, 'base64')) : undefined;
    };
    const recentSends = new Map<string, Promise<SendResult | undefined>>();
    const lids = storedLidBook(auth.state.keys);
    const reach = reachFor(sock, knownUsersOf(sessionId), lids);
    // Each person the network named both ways is told once per link (the address book learns the LID).
    const told = new BoundedSet(4096);
    const learn = (people: Person[]) => {
      const fresh: KnownPerson[] = [];
      for (const { pn, lid } of people) {
        if (!pn || !lid || told.has(`${pn} ${lid}`)) continue;
        told.add(`${pn} ${lid}`);
        fresh.push({ pn, lid });
      }
      if (fresh.length === 0) return;
      callbacks.onPeople(fresh);
      // What a group read names (members' phone numbers) Baileys does not keep itself; receipts and
      // messages from those LIDs find the number in its store afterwards, across restarts too.
      sock.signalRepository.lidMapping.storeLIDPNMappings(fresh).catch((err: unknown) => log.warn({ err }, 'keeping LID mappings failed'));
    };
    const chats = baileysChats({ sock, reach, lids, learn, onEvent: (event) => callbacks.onChatEvent?.(event), log });
    const learnFrom = (item: { chatId: string; chatLid: string | null; from: string; fromLid: string | null }) =>
      learn([personOf(item.chatId, item.chatLid), personOf(item.from, item.fromLid)]);
    // Received messages reach the service in the order they arrived: each waits for the one before it to be
    // handed over (its LID look-ups take a store read the next one may not need), not for it to be stored.
    let handedOver: Promise<unknown> = Promise.resolve();
    const handOver = async (msg: WAMessage): Promise<{ stored: Promise<void> } | undefined> => {
      // The store's promise inside an object, so the next turn waits for this hand-over only, not the store.
      const turn = handedOver.then(async () => {
        const item = await toIncoming(msg, ownAddresses(), lids);
        if (!item) {
          // In the same turn, so a message's waiting event reaches the service before the message itself.
          const waiting = await waitingOf(msg, ownAddresses(), lids);
          if (waiting) callbacks.onChatEvent?.(waiting);
          return undefined;
        }
        if (item.type === 'poll_vote') {
          const vote = await pollVoteOf(msg, item, ownAddresses(), sentMessage, log);
          if (vote) item.pollVote = vote;
        }
        learnFrom(item);
        return { stored: callbacks.onIncoming(item) };
      });
      handedOver = turn.catch(() => undefined);
      return turn;
    };
    const ownAddresses = () => {
      const me = sock.user ?? auth.state.creds.me;
      return { jid: me?.id, lid: me?.lid };
    };
    watchChatStates({ ev: sock.ev, lids, own: ownAddresses, onEvent: (event) => callbacks.onChatEvent?.(event), log });

    sock.ev.on('creds.update', () => {
      auth.saveCreds().catch((err: unknown) => log.error({ err }, 'saving credentials failed'));
    });
    sock.ev.on('connection.update', (update) => {
      if (update.qr) callbacks.onQr(update.qr);
      if (update.connection === 'open') {
        const me = sock.user ?? auth.state.creds.me;
        callbacks.onOpen({
          jid: me?.id ? jidNormalizedUser(me.id) : '',
          lid: me?.lid ? jidNormalizedUser(me.lid) : undefined,
          name: me?.name,
        });
      }
      if (update.connection === 'close') retries.close();
      if (update.connection === 'close' && !closed) {
        closed = true;
        const error = update.lastDisconnect?.error;
        const kind = closeKindOf(error, Boolean(auth.state.creds.registered || auth.state.creds.me?.lid));
        callbacks.onClose(kind, kind === 'banned' ? banMessage(error) : (error?.message ?? 'connection closed'));
      }
    });
    sock.ws.on('frame', () => callbacks.onActivity());
    sock.ev.on('groups.update', (updates) => {
      for (const update of updates) {
        groupCache.forget(update.id);
        // A subject change (a w:gp2 subject notification) names the group's chat.
        if (update.id && typeof update.subject === 'string') {
          callbacks.onChatEvent?.({ kind: 'group', groupJid: update.id, subject: update.subject });
        }
      }
    });
    // This account made or joined a group (a w:gp2 create notification, with the group's metadata).
    sock.ev.on('groups.upsert', (groups) => {
      for (const group of groups) {
        if (group.id && group.subject) callbacks.onChatEvent?.({ kind: 'group', groupJid: group.id, subject: group.subject });
      }
    });
    sock.ev.on('group-participants.update', ({ id }) => groupCache.forget(id));
    // A receipt from a LID names the phone number when the mapping store knows it; one batch at a time, so they keep their order.
    let receiptsInOrder = Promise.resolve();
    const receipts = (found: Receipt[]) => {
      if (found.length === 0) return;
      receiptsInOrder = receiptsInOrder
        .then(async () => {
          const resolved = await Promise.all(
            found.map(async (receipt) => {
              const person = await completePerson(personOf(receipt.recipient), lids);
              return {
                ...receipt,
                recipient: shownAddress(person) ?? receipt.recipient,
                ...(person.lid ? { recipientLid: person.lid } : {}),
              };
            }),
          );
          learn(resolved.map((r) => personOf(r.recipient, r.recipientLid)));
          callbacks.onReceipts(resolved);
        })
        .catch((err: unknown) => log.error({ err }, 'passing on receipts failed'));
    };
    const refused = (key: WAMessageKey, status: number | null | undefined, stub: string[] | null | undefined) => {
      if (!key.fromMe || !key.id || status !== proto.WebMessageInfo.Status.ERROR) return;
      const code = stub?.[0];
      callbacks.onSendError(key.id, `the network refused the message (error ${code ?? 'unknown'})`, code);
    };
    sock.ev.on('messages.update', (updates) => {
      for (const { key, update } of updates) refused(key, update.status, update.messageStubParameters);
      receipts(receiptsFromUpdates(updates));
    });
    // A group receipt naming the account itself is a read mark on another of its devices (watchChatStates).
    sock.ev.on('message-receipt.update', (updates) =>
      receipts(receiptsFromUserReceipts(updates.filter((u) => !isOwn(u.receipt.userJid, ownAddresses())))),
    );
    sock.ev.on('messaging-history.set', (set) => {
      const handled = historyChunk(set, history, ownAddresses(), lids)
        .then((event) => {
          learn(event.messages.flatMap((m) => [personOf(m.chatId, m.chatLid), personOf(m.from, m.fromLid)]));
          return callbacks.onChatEvent?.(event);
        })
        .catch((err: unknown) => log.error({ err }, 'reading a history sync chunk failed'));
      historyHandled = Promise.all([historyHandled, handled]);
    });
    sock.ev.on('messages.upsert', ({ messages, type }) => {
      // An error ack that came while the send's own upsert was still buffered is merged into it (rc14's event buffer).
      for (const message of messages) refused(message.key, message.status, message.messageStubParameters);
      receipts(receiptsFromUpserts(messages));
      if (type !== 'notify') return;
      for (const message of messages) {
        if (message.key.id && storedFirst.delete(message.key.id)) continue;
        // What did not pass beforeReceipt (a placeholder resent by the phone): stored as it comes, as a
        // failure is logged where it is written.
        // the store's own failure is caught here too (adopted by then)
        handOver(message)
          .then((handed) => handed?.stored)
          .catch(() => undefined);
      }
    });

    const close = async () => {
      if (!closed) {
        closed = true;
        await sock.end(undefined);
      }
      await auth.flush();
    };

    return {
      send: async (jid, content, sendOptions = {}) => {
        await reach.assertOnNetwork(jid);
        const sending = sendThrough(sock, jid, content, sendOptions);
        const id = sendOptions.messageId;
        if (id)
          remember(
            recentSends,
            id,
            sending.catch(() => undefined),
          );
        const sent = await sending;
        // Baileys resolved a 1:1 recipient's LID (usync) to encrypt for it; the record keeps it beside the number.
        const person = await completePerson(personOf(sent.remoteJid), lids);
        if (!person.lid) return sent;
        learn([person]);
        return { ...sent, remoteLid: person.lid };
      },
      edit: async (remoteJid, waMessageId, text) => {
        await sock.sendMessage(remoteJid, { text, edit: { remoteJid, fromMe: true, id: waMessageId } });
      },
      react: (chatJid, key, emoji) => reactThrough(sock, chatJid, key, emoji),
      revoke: (remoteJid, waMessageId) => revokeThrough(sock, remoteJid, waMessageId),
      setPresence: (jid, presence) => sock.sendPresenceUpdate(presence, jid),
      onNetwork: (jids) => reach.whichExist(jids),
      newMessageId: () => generateMessageIDV2(sock.user?.id),
      groups: baileysGroups(sock, groupCache, lids, learn),
      chats,
      sendStatus: (content, recipients, sendOptions = {}) => sendStatusThrough(sock, content, recipients, sendOptions),
      requestPairingCode: async (phoneNumber) => sock.requestPairingCode(phoneNumber),
      close,
      logout: async () => {
        if (closed) return;
        closed = true;
        try {
          await sock.logout();
        } catch (err) {
          log.warn({ err }, 'logout request failed; closing anyway');
          await sock.end(undefined);
        }
      },
    };
  };

  return {
    open,
    forget: async (sessionId) => {
      const store = stores.get(sessionId);
      stores.delete(sessionId);
      knownUsers.delete(sessionId);
      await store?.drop();
      await clearAuthState(db, sessionId);
    },
    hasCredentials: async (sessionId) => (await loadAuthState(db, sessionId)).registered,
    downloadMedia: (media) => downloadReceivedMedia(media, options.mediaDispatcher),
    close: async () => undefined,
    // The links share the main thread's heap, which whoever measures collects itself.
    collectGarbage: async () => undefined,
    networkStats: async () => undefined,
  };
};

const SYNC_KINDS: Record<number, HistorySyncKind> = {
  [proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP]: 'initial_bootstrap',
  [proto.HistorySync.HistorySyncType.RECENT]: 'recent',
  [proto.HistorySync.HistorySyncType.FULL]: 'full',
  [proto.HistorySync.HistorySyncType.PUSH_NAME]: 'push_name',
  [proto.HistorySync.HistorySyncType.ON_DEMAND]: 'on_demand',
};

/**
 * Whether Baileys downloads a history chunk (asked with the notification, Socket/chats.js): not when
 * history is off, not a FULL chunk unless the full history was asked for, and not a blob over the cap,
 * which is refused with a warning (the link carries on; the chunk's messages are not stored).
 */
const wantsHistory = (history: HistorySettings, notification: proto.Message.IHistorySyncNotification, log: Logger): boolean => {
  // An on-demand chunk answers fetchChatHistory, which is asked for whatever HISTORY_SYNC_DAYS says.
  if (history.days <= 0 && notification.syncType !== proto.HistorySync.HistorySyncType.ON_DEMAND) return false;
  if (notification.syncType === proto.HistorySync.HistorySyncType.FULL && !history.full) return false;
  const bytes = Number(notification.fileLength ?? 0);
  if (bytes > history.maxBytes) {
    log.warn(
      {
        syncType: SYNC_KINDS[notification.syncType ?? -1] ?? 'other',
        chunkOrder: notification.chunkOrder,
        bytes,
        maxBytes: history.maxBytes,
      },
      'history sync chunk refused: its blob is larger than HISTORY_MAX_BYTES; its messages are not stored',
    );
    return false;
  }
  return true;
};

/**
 * A history chunk as the service stores it: its messages within the days setting (all of them in an
 * on-demand chunk, which was asked for), as received messages are described, and what changed them since:
 * the reactions a message carries (WebMessageInfo.reactions, each the reactor's own reaction message's key)
 * and reactions, edits and deletes sent as messages of their own.
 */
const historyChunk = async (
  set: BaileysEventMap['messaging-history.set'],
  history: HistorySettings,
  own: OwnAddresses,
  lids: LidBook,
): Promise<Extract<ChatEvent, { kind: 'history' }>> => {
  const onDemand = set.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND;
  const since = onDemand ? 0 : Date.now() / 1000 - history.days * 86_400;
  const messages: ReceivedMessage[] = [];
  const changes: ReceivedMessage[] = [];
  let skipped = 0;
  for (const msg of set.messages) {
    const at = Number(msg.messageTimestamp ?? 0);
    const item = at >= since ? await toIncoming(msg, own, lids) : null;
    if (!item) {
      skipped += 1;
      continue;
    }
    if (item.refersTo) changes.push(item);
    else messages.push(item);
    for (const reaction of msg.reactions ?? []) {
      const change = reaction.key ? await toIncoming(reactionMessageOf(msg, reaction), own, lids) : null;
      if (change) changes.push(change);
    }
  }
  const names = set.contacts
    .map((c) => ({ jid: c.id, name: c.notify ?? c.name ?? '' }))
    .filter((c) => c.name !== '' && (c.jid.endsWith('@s.whatsapp.net') || c.jid.endsWith('@lid')));
  return {
    kind: 'history',
    states: await historyChatStates(set.chats, lids),
    syncType: SYNC_KINDS[set.syncType ?? -1] ?? 'other',
    chunkOrder: set.chunkOrder ?? null,
    progress: set.progress ?? null,
    requestId: set.peerDataRequestSessionId ?? null,
    chats: set.chats.length,
    messages,
    changes,
    skipped,
    names,
  };
};

/** A reaction kept on a history message, as the reaction message its reactor sent (the reaction's own key). */
const reactionMessageOf = (target: WAMessage, reaction: proto.IReaction): WAMessage => ({
  key: reaction.key ?? {},
  message: { reactionMessage: { key: target.key, text: reaction.text ?? '', senderTimestampMs: reaction.senderTimestampMs ?? null } },
  messageTimestamp: Math.floor(Number(reaction.senderTimestampMs ?? 0) / 1000),
});
