import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { NetworkTarget } from './baileys-target.ts';
import type { LinkMethod, NetworkThreadData, ThreadMessage, ThreadRequest } from './thread-protocol.ts';
import type { MediaLocator } from '../ports/incoming.ts';
import { MediaGoneError } from './media-gone.ts';
import type {
  CloseKind,
  GroupInfo,
  GroupOps,
  LinkCallbacks,
  Network,
  NetworkLink,
  ParticipantOutcome,
  SendResult,
  ThreadStats,
} from '../ports/network.ts';

export interface ThreadedNetworkOptions {
  databaseUrl: string;
  logger: Logger;
  target: NetworkTarget;
  keepAliveIntervalMs?: number;
  /** how long Baileys trusts a contact's device list before asking the network again */
  deviceListTtlMs?: number;
  /** how often at most the thread reports which links were heard from (default 5 s) */
  activityEveryMs?: number;
  /** turn on V8's memory saver mode before the thread starts (see below) */
  memorySaver?: boolean;
  /** how long a received message waits for its write before it is left unreceipted */
  incomingStoreTimeoutMs?: number;
}

// Compiled (dist/*.js), the thread runs its compiled module; from sources, an entry that registers tsx.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './network-worker.mjs' : './network-worker.js', import.meta.url);
// Links heard from are reported together at most this often: the watchdog waits 75 s and lastSeen is
// written every 10 s, while a message per keep-alive of each idle link was most of the thread's idle time.
const ACTIVITY_EVERY_MS = 5_000;

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The network on its own thread: Baileys' sockets, their encryption and their key store run beside the
 * HTTP server instead of between its requests, so the service uses a second core. The thread starts
 * with the first link; if it dies, every link reports a transient close and the sessions re-link on a
 * new thread.
 */
export const createThreadedNetwork = (options: ThreadedNetworkOptions): Network => {
  const { logger } = options;
  let started: Promise<Worker> | null = null;
  let closing = false;
  let nextId = 1;
  let nextLinkId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  const callbacks = new Map<number, LinkCallbacks>();

  const onMessage = (message: ThreadMessage): void => {
    if (message.kind === 'reply') {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiting?.resolve(message.value);
      else waiting?.reject(message.mediaGone ? new MediaGoneError(message.message) : new Error(message.message));
      return;
    }
    if (message.kind === 'activity') {
      for (const linkId of message.linkIds) callbacks.get(linkId)?.onActivity();
      return;
    }
    if (message.kind !== 'event') return;
    const link = callbacks.get(message.linkId);
    if (!link) return;
    switch (message.event) {
      case 'qr':
        link.onQr(message.qr);
        return;
      case 'open':
        link.onOpen(message.account);
        return;
      case 'close':
        callbacks.delete(message.linkId);
        link.onClose(message.closeKind as CloseKind, message.message);
        return;
      case 'incoming': {
        const { storeId } = message;
        const answer = (error?: string) => {
          request({ call: 'stored', storeId, ...(error === undefined ? {} : { error }) }).catch(() => undefined);
        };
        link.onIncoming(message.item as Parameters<LinkCallbacks['onIncoming']>[0]).then(
          () => answer(),
          (err: unknown) => answer(err instanceof Error ? err.message : String(err)),
        );
        return;
      }
      case 'sendError':
        link.onSendError(message.waMessageId, message.reason);
        return;
      case 'receipts':
        link.onReceipts(message.receipts);
        return;
    }
  };

  const onStopped = (reason: string): void => {
    started = null;
    for (const waiting of pending.values()) waiting.reject(new Error(`the network thread stopped: ${reason}`));
    pending.clear();
    const links = [...callbacks.values()];
    callbacks.clear();
    if (closing) return;
    logger.error({ reason }, 'the network thread stopped; its sessions will re-link');
    for (const link of links) link.onClose('transient', `the network thread stopped: ${reason}`);
  };

  const start = (): Promise<Worker> => {
    if (started) return started;
    const workerData: NetworkThreadData = {
      databaseUrl: options.databaseUrl,
      logLevel: logger.level,
      target: options.target,
      keepAliveIntervalMs: options.keepAliveIntervalMs,
      deviceListTtlMs: options.deviceListTtlMs,
      activityEveryMs: options.activityEveryMs ?? ACTIVITY_EVERY_MS,
      incomingStoreTimeoutMs: options.incomingStoreTimeoutMs,
    };
    started = new Promise<Worker>((resolve, reject) => {
      // With a second isolate in the process, RSS grows under sustained traffic while both V8 heaps stay
      // near 100 MB (400 -> 900-1,100 MB in 3 minutes at 30 messages/s, not given back when idle or
      // after a full collection; with the links on the main thread it is given back). The growth is in
      // V8's 256 KB heap pages. In memory saver mode V8 keeps it flat, at about 1.4x the CPU time; so
      // it is a setting (V8_MEMORY_SAVER), off by default. The flag is process-wide and read at run time.
      if (options.memorySaver) setFlagsFromString('--memory-saver-mode');
      // No inherited execArgv (the entry registers its own TypeScript loader), except --cpu-prof, so a
      // profiled run (the benchmarks) profiles this thread too.
      const worker = new Worker(WORKER, { workerData, execArgv: process.execArgv.filter((arg) => arg.startsWith('--cpu-prof')) });
      let ready = false;
      worker.on('message', (message: ThreadMessage) => {
        if (message.kind === 'ready') {
          ready = true;
          resolve(worker);
        } else onMessage(message);
      });
      worker.on('error', (err) => {
        logger.error({ err }, 'network thread error');
        if (!ready) reject(err);
      });
      worker.on('exit', (code) => onStopped(`exit code ${code}`));
    });
    return started;
  };

  const request = async (message: Request): Promise<unknown> => {
    const worker = await start();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id } as ThreadRequest);
    });
  };

  const linkOf = (linkId: number): NetworkLink => {
    const call = (method: LinkMethod, ...args: unknown[]) => request({ call: 'link', linkId, method, args });
    const group =
      <R>(op: keyof GroupOps) =>
      async (...args: unknown[]): Promise<R> =>
        (await call(`groups.${op}`, ...args)) as R;
    // Closing a link whose thread is gone has nothing left to close.
    const finish = async (method: 'close' | 'logout') => {
      if (!started) return;
      callbacks.delete(linkId);
      await call(method);
    };
    return {
      send: async (jid, content, sendOptions) => (await call('send', jid, content, sendOptions)) as SendResult,
      edit: async (remoteJid, waMessageId, text) => {
        await call('edit', remoteJid, waMessageId, text);
      },
      setPresence: async (jid, presence) => {
        await call('setPresence', jid, presence);
      },
      onNetwork: async (jids) => (await call('onNetwork', jids)) as Set<string>,
      // The same shape as the network's own ids (3EB0 and 18 hex digits), chosen here so that a send
      // knows its id before it crosses to the thread.
      newMessageId: () => `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
      groups: {
        list: group<GroupInfo[]>('list'),
        create: group<GroupInfo>('create'),
        join: group<string>('join'),
        metadata: group<GroupInfo>('metadata'),
        setSubject: group<void>('setSubject'),
        setDescription: group<void>('setDescription'),
        leave: group<void>('leave'),
        participants: group<ParticipantOutcome[]>('participants'),
        setAdminOnly: group<void>('setAdminOnly'),
        inviteCode: group<string>('inviteCode'),
      },
      sendStatus: async (content, recipients, sendOptions) => (await call('sendStatus', content, recipients, sendOptions)) as SendResult,
      requestPairingCode: async (phoneNumber) => (await call('requestPairingCode', phoneNumber)) as string,
      close: () => finish('close'),
      logout: () => finish('logout'),
    };
  };

  return {
    open: async (sessionId, linkCallbacks) => {
      const linkId = nextLinkId++;
      callbacks.set(linkId, linkCallbacks);
      try {
        await request({ call: 'open', sessionId, linkId });
      } catch (err) {
        callbacks.delete(linkId);
        throw err;
      }
      return linkOf(linkId);
    },
    forget: async (sessionId) => {
      await request({ call: 'forget', sessionId });
    },
    hasCredentials: async (sessionId) => (await request({ call: 'hasCredentials', sessionId })) as boolean,
    downloadMedia: async (media: MediaLocator) => (await request({ call: 'downloadMedia', media })) as ReadableStream<Uint8Array>,
    collectGarbage: async () => {
      if (started) await request({ call: 'collectGarbage' });
    },
    threadStats: async () => (started && !closing ? ((await request({ call: 'threadStats' })) as ThreadStats) : undefined),
    close: async () => {
      if (!started) return;
      closing = true;
      const worker = await started;
      await request({ call: 'shutdown' });
      await worker.terminate();
    },
  };
};
