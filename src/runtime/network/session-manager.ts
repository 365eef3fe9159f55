import QRCode from 'qrcode';
import type { QRCodeToDataURLOptionsOther } from 'qrcode';
import type { Logger } from 'pino';
import type { Session } from '../../generated/sqlite/client.ts';
import type { Db } from '../db/client.ts';
import type { EventBus } from '../ports/events.ts';
import type { Incoming, IncomingInput, IncomingItem, MediaLocator, ReceivedMessage } from '../ports/incoming.ts';
import type {
  ChatEvent,
  CloseKind,
  LinkCallbacks,
  LinkedAccount,
  Network,
  NetworkLink,
  KnownPerson,
  NetworkStats,
  Receipt,
} from '../ports/network.ts';
import type { Fence, Ownership } from '../ports/cluster.ts';
import type { LiveView, Sessions, SessionStatus } from '../ports/sessions.ts';
import type { WebhookOutbox } from '../ports/webhooks.ts';
import { reportingRefusals } from './refusals.ts';
import { incomingInputOf } from '../received-messages.ts';

/**
 * The QR as a 300 px PNG, grayscale with the "up" filter on every row instead of RGBA with a filter
 * chosen per row: 3.6 KB instead of 5.9 KB and about 5 ms of CPU instead of 8, the main thread's
 * largest item while sessions link. qrcode hands rendererOpts to pngjs; its types do not list them.
 */
const QR_IMAGE: QRCodeToDataURLOptionsOther & { rendererOpts: { filterType: number; colorType: number } } = {
  errorCorrectionLevel: 'L',
  margin: 2,
  width: 300,
  rendererOpts: { filterType: 2, colorType: 0 },
};

const SEEN_PER_STATEMENT = 500;

export const LOGGED_OUT = 'Logged out from the phone; link it again with a new QR code or pairing code';
export const QR_EXPIRED = 'The QR code was not scanned in time';
export const REPLACED = 'Another client took over this device';

interface Live {
  status: SessionStatus;
  link?: NetworkLink;
  qr?: string;
  qrDataUrl?: string;
  attempt: number;
  retryTimer?: NodeJS.Timeout;
  watchdog?: NodeJS.Timeout;
  lastActivity: number;
  lastSeenWritten: number;
  qrWaiters: Array<(error?: Error) => void>;
  /** bumps on every deliberate change, so callbacks of an older link are ignored */
  generation: number;
  /** the row writes of status changes, chained so they land in the order the changes happened */
  written: Promise<void>;
  /** received messages on their way into the buffer, chained so they keep the order they arrived in */
  received: Promise<void>;
  /**
   * received messages handed to the store, chained the same way but only up to the hand-over: the next
   * message's write is queued while this one's runs, so they can share a transaction
   */
  taken: Promise<void>;
  /** the session's account, read at its first status change (for the webhook endpoint lookup) */
  accountId?: string;
  /** a re-link at start waits for this link's first outcome (open, close or QR) before it opens another */
  relinked?: () => void;
}

export interface SessionManagerOptions {
  db: Db;
  logger: Logger;
  network: Network;
  events: EventBus;
  incoming: Incoming;
  /** turns a received message into its buffer item (recording its media first); by default drops what the item does not show */
  receive?: (sessionId: string, message: ReceivedMessage) => Promise<IncomingInput>;
  webhooks?: WebhookOutbox;
  /**
   * writes what a received message leaves on disk beyond the buffer (its message.received webhook rows),
   * before the item enters the buffer; the network receipts the message only once this resolves.
   * `message` is what the network handed over (its network id, the same when the network delivers it
   * again; its key; what a reaction, an edit or a delete is about).
   */
  onReceived?: (item: IncomingItem, message: ReceivedMessage) => Promise<void>;
  /** a message the network refused after the send was accepted */
  onSendError?: (sessionId: string, waMessageId: string, reason: string, code?: string) => void;
  /**
   * the network refused a call of the session's link (any call: a send, a look-up, a group change...);
   * awaited before the caller sees the refusal, so what it sets in motion (a rate answer's pause) is in place
   */
  onRefused?: (sessionId: string, err: unknown) => Promise<void>;
  /** the network refused the session's login as banned; the session is DISCONNECTED with `reason` */
  onBanned?: (sessionId: string, reason: string) => void;
  /** the session's link opened (a ban or restriction noted before is over) */
  onConnected?: (sessionId: string) => void;
  /** recipients acknowledged messages a session sent */
  onReceipts?: (sessionId: string, receipts: Receipt[]) => void;
  /** the network told a person's phone number and LID together (the address book learns the LID) */
  onPeople?: (sessionId: string, people: KnownPerson[]) => void;
  /** presence updates and calls a link heard; a history chunk's promise settles once it is stored (ports/network.ts) */
  onChatEvent?: (sessionId: string, event: ChatEvent) => void | Promise<unknown>;
  /** whether the session's settings drop a received message of this chat (never stored, buffered or announced) */
  ignores?: (sessionId: string, chatId: string) => Promise<boolean>;
  /** a link with no traffic for this long is considered dead and restarted */
  staleAfterMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  lastSeenWriteEveryMs?: number;
  /** how long deleting a session without a live link waits to reach the network and remove the device */
  unlinkTimeoutMs?: number;
  /** how many links the re-link at start opens at a time (each slot frees when its link opens or fails) */
  relinkConcurrency?: number;
  /** how long one re-linking link may hold its slot before the next is opened anyway */
  relinkSlotMs?: number;
  /** which sessions this node links (several nodes on PostgreSQL); every session by default */
  ownership?: Pick<Ownership, 'owns' | 'confirm' | 'fence'>;
}

/** Owns every network link: connects, reconnects with backoff, and keeps the session rows in step. */
export class SessionManager implements Sessions {
  private readonly live = new Map<string, Live>();
  /** sessions heard from whose lastSeen is not written yet */
  private readonly seen = new Set<string>();
  private seenTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly staleAfterMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly lastSeenWriteEveryMs: number;
  private readonly unlinkTimeoutMs: number;
  /** the sessions markRelinking found, which resumeAll opens */
  private relinking: Array<{ id: string; accountId: string }> | undefined;

  constructor(private readonly options: SessionManagerOptions) {
    this.staleAfterMs = options.staleAfterMs ?? 75_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 1_000;
    this.backoffMaxMs = options.backoffMaxMs ?? 60_000;
    this.lastSeenWriteEveryMs = options.lastSeenWriteEveryMs ?? 10_000;
    this.unlinkTimeoutMs = options.unlinkTimeoutMs ?? 20_000;
  }

  view(sessionId: string): LiveView | undefined {
    const live = this.live.get(sessionId);
    return live ? { status: live.status, qrCode: live.qrDataUrl ?? null } : undefined;
  }

  /**
   * Resolves once the rows hold every status change made so far (of one session, or of all), so a read
   * of a row agrees with the live status laid over it: CONNECTED comes with its phone.
   */
  settled(sessionId?: string): Promise<void> {
    if (sessionId !== undefined) return this.live.get(sessionId)?.written ?? Promise.resolve();
    return Promise.all([...this.live.values()].map((live) => live.written)).then(() => undefined);
  }

  link(sessionId: string): NetworkLink | undefined {
    if (this.options.ownership && !this.options.ownership.owns(sessionId)) return undefined;
    const live = this.live.get(sessionId);
    return live?.status === 'CONNECTED' ? live.link : undefined;
  }

  async noteProblem(sessionId: string, lastError: string): Promise<void> {
    const live = this.live.get(sessionId);
    if (live) await this.apply(sessionId, live, live.status, { lastError });
  }

  /** Starts (or restarts) the link; resolves once the socket is opening, not once it is connected. */
  async connect(sessionId: string): Promise<void> {
    const live = this.entry(sessionId);
    if (live.link && (live.status === 'CONNECTED' || live.status === 'QR_READY' || live.status === 'CONNECTING')) return;
    await this.options.db.session.update({ where: { id: sessionId }, data: { autoConnect: true } });
    live.attempt = 0;
    await this.start(sessionId, live);
  }

  /** Manual disconnect or pause: closes the link, keeps credentials and phone. */
  async stop(sessionId: string, status: 'DISCONNECTED' | 'PAUSED', lastError?: string): Promise<void> {
    const live = this.entry(sessionId);
    live.generation += 1;
    await this.teardown(live);
    await this.apply(sessionId, live, status, {
      autoConnect: false,
      ...(lastError !== undefined ? { lastError } : {}),
    });
    this.options.logger.info({ sessionId }, status === 'PAUSED' ? 'session paused' : 'session disconnected');
  }

  /** Sets the status as given without touching the link (PATCH status override of CONNECTING/CONNECTED). */
  async override(sessionId: string, status: SessionStatus): Promise<void> {
    const live = this.entry(sessionId);
    await this.apply(sessionId, live, status, {});
  }

  /**
   * Deleting a session: the device is removed from the phone whenever credentials exist, then they are
   * forgotten. A linked session logs out on its link; one without a live link (paused, disconnected,
   * re-linking) opens a link from its stored credentials just to log out. When that link cannot be
   * opened, this throws and the credentials stay, so the phone never keeps a device the service forgot.
   */
  async remove(sessionId: string): Promise<void> {
    const live = this.live.get(sessionId);
    let loggedOut = false;
    if (live) {
      live.generation += 1;
      this.failQrWaiters(live, new Error('session deleted'));
      const linked = live.status === 'CONNECTED' ? live.link : undefined;
      if (linked) {
        this.clearTimers(live);
        live.link = undefined;
        await linked.logout().catch((err: unknown) => this.options.logger.warn({ err, sessionId }, 'logout on delete failed'));
        loggedOut = true;
      } else {
        await this.teardown(live);
      }
      this.live.delete(sessionId);
    }
    if (!loggedOut && (await this.options.network.hasCredentials(sessionId))) await this.unlinkStored(sessionId);
    this.options.incoming.forget(sessionId);
    await this.options.network.forget(sessionId);
  }

  /** Opens a link from the stored credentials only to log the device out; see remove. */
  private unlinkStored(sessionId: string): Promise<void> {
    const log = this.options.logger.child({ sessionId });
    return new Promise<void>((resolve, reject) => {
      let link: NetworkLink | undefined;
      let opened = false;
      let done = false;
      const finish = (error?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (!error) {
          resolve();
          return;
        }
        const closing = link?.close() ?? Promise.resolve();
        closing.catch(() => undefined).finally(() => reject(error));
      };
      const logout = () => {
        if (!link || done) return;
        log.debug('logging the device out from its stored credentials before deleting the session');
        link.logout().then(
          () => finish(),
          (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
        );
      };
      const timer = setTimeout(() => finish(new Error('the network could not be reached to remove the device')), this.unlinkTimeoutMs);
      const fence = this.fenceOf(sessionId);
      const open = (callbacks: LinkCallbacks) => this.options.network.open(sessionId, callbacks, fence);
      open({
        // Registered credentials log in without a QR; a QR means nothing is linked, so there is nothing to remove.
        onQr: () => {
          finish();
          void link?.close();
        },
        onOpen: () => {
          opened = true;
          logout();
        },
        onClose: (kind, message) => {
          if (kind === 'loggedOut') finish();
          else finish(new Error(`the link closed before the device was removed: ${message}`));
        },
        onActivity: () => undefined,
        onIncoming: async () => undefined,
        onSendError: () => undefined,
        onReceipts: () => undefined,
        onPeople: () => undefined,
      }).then(
        (opening) => {
          link = opening;
          if (done) void opening.close();
          else if (opened) logout();
        },
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }

  /** Pairing codes need an open socket waiting for registration, as the QR flow does. */
  async pairingCode(sessionId: string, phoneNumber: string): Promise<string> {
    const live = this.entry(sessionId);
    if (live.status !== 'QR_READY') {
      const ready = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the network did not offer a registration in time')), 30_000);
        live.qrWaiters.push((error) => {
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        });
      });
      await this.connect(sessionId);
      await ready;
    }
    if (!live.link) throw new Error('no link');
    const code = await live.link.requestPairingCode(phoneNumber);
    return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
  }

  /**
   * At start, before the service answers: every session that was meant to be up reads CONNECTING until
   * its link is back. A stop (a crash above all) leaves the rows as they were, and a stale CONNECTED
   * would tell a client it can send while the link does not exist yet. One statement for all of them,
   * with their session.status events in the same transaction.
   */
  async markRelinking(): Promise<number> {
    this.relinking = await this.markRows();
    return this.relinking.length;
  }

  /** markRelinking's work, for every session this node owns or only the ones given. */
  private async markRows(only?: string[]): Promise<Array<{ id: string; accountId: string }>> {
    const { db, webhooks } = this.options;
    const ownership = this.options.ownership;
    const rows = (
      await db.session.findMany({
        where: { autoConnect: true, ...(only ? { id: { in: only } } : {}) },
        select: { id: true, accountId: true, sessionName: true, phone: true, lastError: true },
      })
    ).filter((row) => !ownership || ownership.owns(row.id));
    const found = rows.map(({ id, accountId }) => ({ id, accountId }));
    if (rows.length === 0) return found;
    const events = [];
    if (webhooks) {
      for (const row of rows) {
        const endpoints = await webhooks.matching(row.accountId, 'session.status', row.id);
        if (endpoints.length === 0) continue;
        const event = await webhooks.rowsFor(
          {
            accountId: row.accountId,
            sessionId: row.id,
            type: 'session.status',
            data: { sessionId: row.id, sessionName: row.sessionName, status: 'CONNECTING', phone: row.phone, lastError: row.lastError },
          },
          endpoints,
        );
        if (event) events.push(event);
      }
    }
    const update = db.session.updateMany({ where: { id: { in: rows.map((r) => r.id) } }, data: { status: 'CONNECTING' } });
    if (events.length === 0) await update;
    else {
      await db.$transaction([update, ...(webhooks?.writes(events) ?? [])]);
      webhooks?.written(events);
    }
    return found;
  }

  /**
   * Re-links the sessions markRelinking found, from their stored credentials, a few at a time: each
   * slot frees when its link opens or fails, so the links come up as fast as the network thread can
   * take them and the service still answers meanwhile. Resolves once every link was started.
   */
  async resumeAll(): Promise<number> {
    if (!this.relinking) await this.markRelinking();
    const rows = this.relinking ?? [];
    this.relinking = undefined;
    return this.relinkRows(rows);
  }

  private async relinkRows(rows: Array<{ id: string; accountId: string }>): Promise<number> {
    const concurrency = Math.max(1, this.options.relinkConcurrency ?? 16);
    const slotMs = this.options.relinkSlotMs ?? 30_000;
    // Read CONNECTING from the first request on, as their rows do.
    for (const { id, accountId } of rows) {
      const live = this.entry(id);
      live.accountId = accountId;
      live.status = 'CONNECTING';
    }
    let next = 0;
    const relinkNext = async (): Promise<void> => {
      while (next < rows.length && !this.stopping) {
        const { id } = rows[next++];
        const live = this.live.get(id);
        // A client may have acted on the session meanwhile (deleted, paused or connected it).
        if (live?.generation !== 0) continue;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            live.relinked = undefined;
            resolve();
          };
          const timer = setTimeout(done, slotMs);
          live.relinked = done;
          live.generation += 1;
          // The row says CONNECTING already (markRelinking).
          void this.open(id, live, live.generation);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, relinkNext));
    return rows.length;
  }

  /** Shutdown: close every link without logging out, so the next start re-links them. */
  async closeAll(): Promise<void> {
    this.stopping = true;
    await this.writeSeen();
    await Promise.all(
      [...this.live.values()].map(async (live) => {
        live.generation += 1;
        this.failQrWaiters(live, new Error('shutting down'));
        await this.teardown(live);
      }),
    );
    await this.options.network.close();
  }

  /** A received file, fetched and decrypted by the network (see Network.downloadMedia); needs no live link. */
  downloadMedia(media: MediaLocator): Promise<ReadableStream<Uint8Array>> {
    return this.options.network.downloadMedia(media);
  }

  /** See Network.networkStats. */
  async prepare(): Promise<void> {
    await this.options.network.prepare?.();
  }

  networkStats(): Promise<NetworkStats | undefined> {
    return this.options.network.networkStats();
  }

  /** See Network.collectGarbage. */
  async collectGarbage(): Promise<void> {
    await this.options.network.collectGarbage();
  }

  /** Sessions this node has just claimed from another (dead or lapsed) node: re-linked as at a start. */
  async adopt(sessionIds: string[]): Promise<number> {
    // A session with an entry here is being acted on already (a request that reached this node claimed it).
    const fresh = sessionIds.filter((id) => !this.live.has(id));
    if (fresh.length === 0 || this.stopping) return 0;
    const wanted = await this.options.db.session.findMany({ where: { id: { in: fresh }, autoConnect: true }, select: { id: true } });
    // Read CONNECTING from now on, not the row the previous owner left (CONNECTED while nobody links it).
    for (const { id } of wanted) if (!this.live.has(id)) this.entry(id).status = 'CONNECTING';
    return this.relinkRows(await this.markRows(wanted.map((r) => r.id)));
  }

  /**
   * Sessions this node lost (another node claimed them, or its lease lapsed): each link is closed at once
   * and nothing more is written for it; the new owner writes the rows from now on.
   */
  async release(sessionIds: string[]): Promise<void> {
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        const live = this.live.get(sessionId);
        if (!live) return;
        live.generation += 1;
        this.live.delete(sessionId);
        this.failQrWaiters(live, new Error('the session moved to another node'));
        await this.teardown(live).catch((err: unknown) => this.options.logger.warn({ err, sessionId }, 'closing a lost link failed'));
      }),
    );
  }

  /** Right before a send: this node still owns the session (its fencing epoch is current). */
  stillOwns(sessionId: string): Promise<boolean> {
    return this.options.ownership?.confirm(sessionId) ?? Promise.resolve(true);
  }

  /** The claim a link opened now writes its keys under (several nodes); undefined outside a cluster. */
  private fenceOf(sessionId: string): { fence: Fence } | undefined {
    const fence = this.options.ownership?.fence(sessionId);
    return fence ? { fence } : undefined;
  }

  private entry(sessionId: string): Live {
    let live = this.live.get(sessionId);
    if (!live) {
      live = {
        status: 'DISCONNECTED',
        attempt: 0,
        lastActivity: 0,
        lastSeenWritten: 0,
        qrWaiters: [],
        generation: 0,
        written: Promise.resolve(),
        received: Promise.resolve(),
        taken: Promise.resolve(),
      };
      this.live.set(sessionId, live);
    }
    return live;
  }

  /** Whether this node may link and record the session (always, outside a cluster). */
  private mine(sessionId: string): boolean {
    return !this.options.ownership || this.options.ownership.owns(sessionId);
  }

  private async start(sessionId: string, live: Live): Promise<void> {
    if (this.stopping || !this.mine(sessionId)) return;
    live.generation += 1;
    const generation = live.generation;
    await this.teardown(live);
    await this.apply(sessionId, live, 'CONNECTING', {});
    await this.open(sessionId, live, generation);
  }

  private async open(sessionId: string, live: Live, generation: number): Promise<void> {
    const current = () => live.generation === generation && this.live.get(sessionId) === live;
    const fence = this.fenceOf(sessionId);
    // Lost between the decision to link and now: the new owner links it.
    if (this.options.ownership && !fence) {
      live.relinked?.();
      return;
    }
    const open = (callbacks: LinkCallbacks) => this.options.network.open(sessionId, callbacks, fence);
    try {
      const opened = await open({
        onQr: (qr) => {
          if (current()) void this.onQr(sessionId, live, qr, generation);
        },
        onOpen: (account) => {
          if (current()) void this.onOpen(sessionId, live, account);
        },
        onClose: (kind, message) => {
          if (current()) void this.onClose(sessionId, live, kind, message);
        },
        onActivity: () => {
          if (current()) this.onActivity(sessionId, live);
        },
        onIncoming: (message) => {
          // The store is called in arrival order (and keeps it, message-store.ts) without waiting for the
          // writes before; what follows the write waits for the messages before it.
          const taken = live.taken.then(async () => {
            if (await this.options.ignores?.(sessionId, message.chatId)) return undefined;
            const input = this.toItem(sessionId, message);
            // awaited below, once the messages before it are in the buffer; a failure meanwhile is not unhandled
            input.catch(() => undefined);
            // in an object, so this turn ends at the hand-over, not at the write
            return { input };
          });
          live.taken = taken.then(
            () => undefined,
            () => undefined,
          );
          const stored = Promise.all([taken, live.received])
            .then(async ([item]) => item?.input)
            .then(async (input) => {
              if (!input) return;
              // Into the buffer only once its webhook rows are written: a message whose write failed is
              // delivered again, and would otherwise be in the buffer twice.
              const item = this.options.incoming.prepare(sessionId, input);
              await this.options.onReceived?.(item, message);
              this.options.incoming.add(item);
            });
          live.received = stored.catch((err: unknown) =>
            this.options.logger.error(
              { err, sessionId, messageId: message.messageId },
              'storing a received message failed; it is left unreceipted',
            ),
          );
          return stored;
        },
        onSendError: (waMessageId, reason, code) => {
          this.options.onSendError?.(sessionId, waMessageId, reason, code);
        },
        onReceipts: (receipts) => {
          this.options.onReceipts?.(sessionId, receipts);
        },
        onPeople: (people) => {
          this.options.onPeople?.(sessionId, people);
        },
        onChatEvent: (event) => (current() ? this.options.onChatEvent?.(sessionId, event) : undefined),
      });
      const { onRefused } = this.options;
      live.link = onRefused
        ? reportingRefusals(opened, (err) =>
            onRefused(sessionId, err).catch((failure: unknown) =>
              this.options.logger.error({ err: failure, sessionId }, 'handling a refusal of the network failed'),
            ),
          )
        : opened;
      live.lastActivity = Date.now();
      this.armWatchdog(sessionId, live, generation);
    } catch (err) {
      this.options.logger.error({ err, sessionId }, 'opening the link failed');
      if (current()) await this.onClose(sessionId, live, 'transient', err instanceof Error ? err.message : String(err));
    }
  }

  private toItem(sessionId: string, message: ReceivedMessage): Promise<IncomingInput> {
    if (this.options.receive) return this.options.receive(sessionId, message);
    return Promise.resolve(incomingInputOf(message));
  }

  private async onQr(sessionId: string, live: Live, qr: string, generation: number): Promise<void> {
    live.relinked?.();
    const image = await QRCode.toDataURL(qr, QR_IMAGE);
    // The link may have moved on (scanned, restarted) while the image was drawn.
    if (live.generation !== generation) return;
    live.qr = qr;
    live.qrDataUrl = image;
    await this.apply(sessionId, live, 'QR_READY', {});
    for (const waiter of live.qrWaiters.splice(0)) waiter();
  }

  private async onOpen(sessionId: string, live: Live, account: LinkedAccount): Promise<void> {
    live.relinked?.();
    live.attempt = 0;
    live.qr = undefined;
    live.qrDataUrl = undefined;
    this.failQrWaiters(live, new Error('already linked'));
    await this.apply(sessionId, live, 'CONNECTED', { phone: account.jid || undefined, lastError: null, lastSeen: new Date() });
    this.options.logger.info({ sessionId }, 'session connected');
    this.options.onConnected?.(sessionId);
  }

  private async onClose(sessionId: string, live: Live, kind: CloseKind, message: string): Promise<void> {
    const log = this.options.logger.child({ sessionId });
    live.relinked?.();
    live.link = undefined;
    this.clearTimers(live);
    live.qr = undefined;
    live.qrDataUrl = undefined;
    if (this.stopping) return;
    if (!this.mine(sessionId) || kind === 'fenced') {
      // A node that lost the session hears its link replaced by the new owner's, or its key writes refused
      // before its renewal tells it: nothing of it is its to record, and the renewal gives the lease up.
      if (kind === 'fenced') log.warn({ message }, 'the link is fenced: another node holds the session; closed here');
      await this.release([sessionId]);
      return;
    }
    if (kind === 'restart') {
      // Part of every pairing: the session's one info line is 'session connected', once the new link is up.
      log.debug('the network asked for a new connection (stream error 515, as after each pairing); reconnecting at once');
      await this.start(sessionId, live);
      return;
    }
    if (kind === 'banned') {
      // The credentials stay: a temporary ban ends, and the same device logs in again then.
      log.warn({ message }, 'the network refused the login: banned');
      this.failQrWaiters(live, new Error(message));
      await this.apply(sessionId, live, 'DISCONNECTED', { lastError: message, autoConnect: false });
      this.options.onBanned?.(sessionId, message);
      return;
    }
    if (kind === 'loggedOut' || kind === 'qrExpired' || kind === 'replaced') {
      const lastError = kind === 'loggedOut' ? LOGGED_OUT : kind === 'qrExpired' ? QR_EXPIRED : REPLACED;
      log.warn({ kind, message }, 'link ended');
      this.failQrWaiters(live, new Error(lastError));
      if (kind === 'loggedOut') await this.options.network.forget(sessionId);
      await this.apply(sessionId, live, 'DISCONNECTED', { lastError, autoConnect: false });
      return;
    }
    live.attempt += 1;
    const ceiling = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.min(live.attempt - 1, 10));
    const delay = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    log.warn({ message, attempt: live.attempt, delayMs: delay }, 'link dropped; reconnecting');
    await this.apply(sessionId, live, 'CONNECTING', { lastError: message });
    const generation = live.generation;
    live.retryTimer = setTimeout(() => {
      live.retryTimer = undefined;
      if (live.generation === generation) void this.start(sessionId, live);
    }, delay);
  }

  private onActivity(sessionId: string, live: Live): void {
    const now = Date.now();
    live.lastActivity = now;
    if (live.status === 'CONNECTED' && now - live.lastSeenWritten >= this.lastSeenWriteEveryMs) {
      live.lastSeenWritten = now;
      this.seen.add(sessionId);
      if (!this.seenTimer) {
        this.seenTimer = setTimeout(() => void this.writeSeen(), this.lastSeenWriteEveryMs);
        this.seenTimer.unref();
      }
    }
  }

  /**
   * lastSeen of every session heard from since the last write, in one statement: an idle link pings
   * every 30 s, and a write per ping of each of thousands of sessions was most of the idle cost.
   * The time written is the write's, at most lastSeenWriteEveryMs after the activity.
   */
  private async writeSeen(): Promise<void> {
    if (this.seenTimer) clearTimeout(this.seenTimer);
    this.seenTimer = undefined;
    const ids = [...this.seen];
    this.seen.clear();
    const lastSeen = new Date();
    for (let i = 0; i < ids.length; i += SEEN_PER_STATEMENT) {
      const chunk = ids.slice(i, i + SEEN_PER_STATEMENT);
      await this.options.db.session
        .updateMany({ where: { id: { in: chunk } }, data: { lastSeen } })
        .catch((err: unknown) => this.options.logger.warn({ err, sessions: chunk.length }, 'lastSeen update failed'));
    }
  }

  /** Baileys notices a silent socket only when it tries to ping; this catches a link that went quiet anyway. */
  private armWatchdog(sessionId: string, live: Live, generation: number): void {
    const check = () => {
      if (live.generation !== generation || !live.link) return;
      if (Date.now() - live.lastActivity > this.staleAfterMs) {
        this.options.logger.warn({ sessionId }, 'no traffic past the keep-alive window; restarting the link');
        const link = live.link;
        live.link = undefined;
        live.generation += 1;
        void link.close().finally(() => this.onClose(sessionId, live, 'transient', 'link went silent'));
        return;
      }
      live.watchdog = setTimeout(check, Math.max(1_000, this.staleAfterMs / 3));
      live.watchdog.unref();
    };
    live.watchdog = setTimeout(check, Math.max(1_000, this.staleAfterMs / 3));
    live.watchdog.unref();
  }

  private clearTimers(live: Live): void {
    if (live.retryTimer) clearTimeout(live.retryTimer);
    if (live.watchdog) clearTimeout(live.watchdog);
    live.retryTimer = undefined;
    live.watchdog = undefined;
  }

  private failQrWaiters(live: Live, error: Error): void {
    for (const waiter of live.qrWaiters.splice(0)) waiter(error);
  }

  private async teardown(live: Live): Promise<void> {
    live.relinked?.();
    this.clearTimers(live);
    live.qr = undefined;
    live.qrDataUrl = undefined;
    const link = live.link;
    live.link = undefined;
    if (link) await link.close();
  }

  /**
   * The status change and its session.status webhook event in one transaction, so an event exists exactly
   * when the change does. The session's account is read once and kept; the row is read before the change
   * only when an endpoint wants the event.
   */
  private async writeStatus(
    sessionId: string,
    live: Live,
    status: SessionStatus,
    data: { phone?: string; lastError?: string | null; lastSeen?: Date; autoConnect?: boolean },
  ): Promise<Session> {
    const { db, webhooks } = this.options;
    const update = () => db.session.update({ where: { id: sessionId }, data: { status, ...data } });
    if (status === 'CONNECTED' && data.phone) {
      // A number linked for the first time (or another number than before) starts its send warm-up.
      await db.session.updateMany({
        where: { id: sessionId, OR: [{ linkedAt: null }, { phone: null }, { phone: { not: data.phone } }] },
        data: { linkedAt: new Date() },
      });
    }
    live.accountId ??= (await db.session.findUnique({ where: { id: sessionId }, select: { accountId: true } }))?.accountId;
    const endpoints = webhooks && live.accountId ? await webhooks.matching(live.accountId, 'session.status', sessionId) : [];
    if (!webhooks || endpoints.length === 0) return update();
    const before = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    const after = { ...before, status, ...data };
    const rows = await webhooks.rowsFor(
      {
        accountId: before.accountId,
        sessionId,
        type: 'session.status',
        data: { sessionId, sessionName: after.sessionName, status, phone: after.phone, lastError: after.lastError },
      },
      endpoints,
    );
    if (!rows) return update();
    const [row] = await db.$transaction([update(), ...webhooks.writes([rows])]);
    webhooks.written([rows]);
    return row;
  }

  private async apply(
    sessionId: string,
    live: Live,
    status: SessionStatus,
    data: { phone?: string; lastError?: string | null; lastSeen?: Date; autoConnect?: boolean },
  ): Promise<void> {
    live.status = status;
    const write = live.written.then(async () => {
      if (!this.mine(sessionId)) return;
      try {
        const row = await this.writeStatus(sessionId, live, status, data);
        this.options.events.publish('session', sessionId, { ...row, status, qrCode: live.qrDataUrl ?? null });
      } catch (err) {
        // The row can be gone when a delete races a link callback; nothing to record then.
        this.options.logger.debug({ err, sessionId }, 'session row not updated');
      }
    });
    live.written = write;
    await write;
  }
}
