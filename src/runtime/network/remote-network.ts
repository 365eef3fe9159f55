import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { NetworkTarget } from './baileys-target.ts';
import type { LinkMethod, NetworkMessage, NetworkRequest, NetworkWorkerData } from './network-protocol.ts';
import type { MediaLocator } from '../ports/incoming.ts';
import { MediaGoneError } from './media-gone.ts';
import { NotOnNetworkError } from './not-on-network.ts';
import type {
  ChatOps,
  CloseKind,
  GroupInfo,
  GroupOps,
  LinkCallbacks,
  Network,
  NumberOnNetwork,
  NetworkLink,
  HistorySettings,
  NetworkStats,
  ParticipantOutcome,
  SendResult,
} from '../ports/network.ts';

export interface RemoteNetworkOptions {
  /** `process`: a child process of its own (the default); `thread`: a worker thread of this process */
  isolation: 'process' | 'thread';
  databaseUrl: string;
  logger: Logger;
  target: NetworkTarget;
  keepAliveIntervalMs?: number;
  /** how long Baileys trusts a contact's device list before asking the network again */
  deviceListTtlMs?: number;
  /** how long a received message waits for its write before it is left unreceipted */
  incomingStoreTimeoutMs?: number;
  /** how long a user the network does not know is believed absent before a send asks again */
  notOnNetworkTtlMs?: number;
  /** history sync from the phone (off when not given) */
  history?: HistorySettings;
  /** how often at most the worker reports which links were heard from (default 5 s) */
  activityEveryMs?: number;
  /** run the worker's V8 in memory saver mode (see below) */
  memorySaver?: boolean;
  /** the worker gives memory back once quiet after a busy period (memory-reclaim.ts) */
  memoryReclaim?: boolean;
}

// Compiled (dist/*.js), the worker runs its compiled module; from sources, an entry that registers tsx.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './network-worker.mjs' : './network-worker.js', import.meta.url);
// Links heard from are reported together at most this often: the watchdog waits 75 s and lastSeen is
// written every 10 s, while a message per keep-alive of each idle link was most of the worker's idle time.
const ACTIVITY_EVERY_MS = 5_000;
// A download crosses in chunks, pulled by the reader: this many wait on this side at most.
const DOWNLOAD_CHUNKS_AHEAD = 4;
// How long a network process may take to end its links after the service is done with it.
const EXIT_GRACE_MS = 5_000;

/** A refusal from the worker, as the error it was there (the typed ones are told by a flag). */
const errorOf = (reply: Extract<NetworkMessage, { kind: 'reply'; ok: false }>): Error =>
  reply.mediaGone
    ? new MediaGoneError(reply.message)
    : reply.notOnNetwork
      ? new NotOnNetworkError(reply.message)
      : new Error(reply.message);

type Request = NetworkRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** The running worker, whichever kind it is. */
interface Remote {
  post: (request: NetworkRequest, failed: (err: Error) => void) => void;
  /** after the worker answered shutdown */
  stop: () => Promise<void>;
}

/**
 * The network apart from the HTTP server: Baileys' sockets, their encryption and their key store run
 * beside it instead of between its requests, so the service uses a second core.
 *
 * By default the worker is a child process. With a second V8 isolate in the same process (a worker
 * thread) RSS grows under sustained traffic and is not given back when idle or after a full collection
 * (+168 % in a 3-minute soak at 30 messages/s): V8 maps new 256 KB heap pages and never unmaps them,
 * while a process with one isolate returns them (see the README's Soak section). A process costs the
 * memory of a second Node.js runtime instead.
 *
 * The worker starts with the first link; if it dies, every link reports a transient close and the
 * sessions re-link on a new one. A network process ends when its IPC channel closes, so it does not
 * outlive the service, even a SIGKILLed one.
 */
export const createRemoteNetwork = (options: RemoteNetworkOptions): Network => {
  const { logger, isolation } = options;
  const name = `network ${isolation}`;
  let started: Promise<Remote> | null = null;
  let closing = false;
  let nextId = 1;
  let nextLinkId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  const callbacks = new Map<number, LinkCallbacks>();

  const onMessage = (message: NetworkMessage): void => {
    if (message.kind === 'reply') {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiting?.resolve(message.value);
      else waiting?.reject(errorOf(message));
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
        link.onSendError(message.waMessageId, message.reason, message.code);
        return;
      case 'receipts':
        link.onReceipts(message.receipts);
        return;
      case 'people':
        link.onPeople(message.people);
        return;
      case 'chat':
        link.onChatEvent?.(message.chat);
        return;
    }
  };

  const onStopped = (reason: string): void => {
    started = null;
    for (const waiting of pending.values()) waiting.reject(new Error(`the ${name} stopped: ${reason}`));
    pending.clear();
    const links = [...callbacks.values()];
    callbacks.clear();
    if (closing) return;
    logger.error({ reason }, `the ${name} stopped; its sessions will re-link`);
    for (const link of links) link.onClose('transient', `the ${name} stopped: ${reason}`);
  };

  const send = (remote: Remote, message: Request): Promise<unknown> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      remote.post({ ...message, id } as NetworkRequest, (err) => {
        pending.delete(id);
        reject(err);
      });
    });
  };

  const startThread = (ready: (remote: Remote) => void, failed: (err: Error) => void): void => {
    // The flag is process-wide and read at run time.
    if (options.memorySaver) setFlagsFromString('--memory-saver-mode');
    // No inherited execArgv (the entry registers its own TypeScript loader), except --cpu-prof, so a
    // profiled service profiles its network thread too. The name is the OS thread's (top -H, /proc).
    const worker = new Worker(WORKER, { name: 'network', execArgv: process.execArgv.filter((arg) => arg.startsWith('--cpu-prof')) });
    const remote: Remote = {
      post: (request) => worker.postMessage(request),
      stop: async () => {
        await worker.terminate();
      },
    };
    let up = false;
    worker.on('message', (message: NetworkMessage) => {
      if (message.kind !== 'ready') return onMessage(message);
      up = true;
      ready(remote);
    });
    worker.on('error', (err) => {
      logger.error({ err }, 'network thread error');
      if (!up) failed(err);
    });
    worker.on('exit', (code) => onStopped(`exit code ${code}`));
  };

  const startProcess = (ready: (remote: Remote) => void, failed: (err: Error) => void): void => {
    const execArgv = [
      ...(options.memorySaver ? ['--memory-saver-mode'] : []),
      // A service started with --cpu-prof (or a dir for it) profiles its network process too; from
      // NODE_OPTIONS the child inherits them by itself.
      ...process.execArgv.filter((arg) => arg.startsWith('--cpu-prof')),
    ];
    // Advanced serialization: Buffers, Uint8Arrays, Maps and Dates cross as they are (JSON would not).
    const child: ChildProcess = fork(fileURLToPath(WORKER), [], { execArgv, serialization: 'advanced' });
    let exited: Promise<void> | undefined;
    const remote: Remote = {
      post: (request, postFailed) => {
        child.send(request, undefined, undefined, (err) => {
          if (err) postFailed(err);
        });
      },
      stop: async () => {
        exited ??= new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
        });
        // Closing the channel is what ends the process (the same path as when this process dies).
        if (child.connected) child.disconnect();
        await exited;
      },
    };
    let up = false;
    child.on('message', (message: NetworkMessage) => {
      if (message.kind !== 'ready') return onMessage(message);
      up = true;
      ready(remote);
    });
    child.on('error', (err) => {
      logger.error({ err }, 'network process error');
      if (!up) failed(err);
    });
    child.on('exit', (code, signal) => onStopped(signal ? `killed by ${signal}` : `exit code ${code}`));
  };

  const start = (): Promise<Remote> => {
    if (started) return started;
    const data: NetworkWorkerData = {
      databaseUrl: options.databaseUrl,
      logLevel: logger.level,
      logPretty: process.stdout.isTTY === true,
      target: options.target,
      keepAliveIntervalMs: options.keepAliveIntervalMs,
      deviceListTtlMs: options.deviceListTtlMs,
      incomingStoreTimeoutMs: options.incomingStoreTimeoutMs,
      notOnNetworkTtlMs: options.notOnNetworkTtlMs,
      history: options.history,
      activityEveryMs: options.activityEveryMs ?? ACTIVITY_EVERY_MS,
      memoryReclaim: options.memoryReclaim,
    };
    const starting = new Promise<Remote>((resolve, reject) => {
      const ready = (remote: Remote) => send(remote, { call: 'init', data }).then(() => resolve(remote), reject);
      if (isolation === 'thread') startThread(ready, reject);
      else startProcess(ready, reject);
    });
    started = starting;
    // A worker that failed to start is tried again by the next request.
    starting.catch(() => {
      if (started === starting) started = null;
    });
    return starting;
  };

  const request = async (message: Request): Promise<unknown> => send(await start(), message);

  const linkOf = (linkId: number): NetworkLink => {
    const call = (method: LinkMethod, ...args: unknown[]) => request({ call: 'link', linkId, method, args });
    const group =
      <R>(op: keyof GroupOps) =>
      async (...args: unknown[]): Promise<R> =>
        (await call(`groups.${op}`, ...args)) as R;
    const chat =
      <R>(op: keyof ChatOps) =>
      async (...args: unknown[]): Promise<R> =>
        (await call(`chats.${op}`, ...args)) as R;
    // Closing a link whose worker is gone has nothing left to close.
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
      react: async (chatJid, key, emoji) => (await call('react', chatJid, key, emoji)) as string,
      revoke: async (remoteJid, waMessageId) => {
        await call('revoke', remoteJid, waMessageId);
      },
      setPresence: async (jid, presence) => {
        await call('setPresence', jid, presence);
      },
      onNetwork: async (jids) => (await call('onNetwork', jids)) as Set<string>,
      // The same shape as the network's own ids (3EB0 and 18 hex digits), chosen here so that a send
      // knows its id before it crosses to the worker.
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
      chats: {
        checkNumbers: chat<NumberOnNetwork[]>('checkNumbers'),
        markRead: chat<{ read: string[]; unknown: string[] }>('markRead'),
        subscribePresence: chat<void>('subscribePresence'),
        setOwnPresence: chat<void>('setOwnPresence'),
        rejectCall: chat<void>('rejectCall'),
        profilePicture: chat<string | null>('profilePicture'),
        fetchHistory: chat<string>('fetchHistory'),
      },
      sendStatus: async (content, recipients, sendOptions) => (await call('sendStatus', content, recipients, sendOptions)) as SendResult,
      requestPairingCode: async (phoneNumber) => (await call('requestPairingCode', phoneNumber)) as string,
      close: () => finish('close'),
      logout: () => finish('logout'),
    };
  };

  /**
   * A received file, read from the worker a chunk at a time as the reader pulls: the worker fetches no
   * further ahead than its own stream buffers, and a reader that goes away cancels the fetch there.
   */
  const downloadMedia = async (media: MediaLocator): Promise<ReadableStream<Uint8Array>> => {
    const remote = await start();
    const downloadId = (await send(remote, { call: 'downloadMedia', media })) as number;
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          const chunk = (await send(remote, { call: 'readMedia', downloadId })) as Uint8Array | null;
          if (chunk) controller.enqueue(chunk);
          else controller.close();
        },
        cancel: async () => {
          await send(remote, { call: 'cancelMedia', downloadId }).catch(() => undefined);
        },
      },
      new CountQueuingStrategy({ highWaterMark: DOWNLOAD_CHUNKS_AHEAD }),
    );
  };

  return {
    open: async (sessionId, linkCallbacks, options) => {
      const linkId = nextLinkId++;
      callbacks.set(linkId, linkCallbacks);
      try {
        await request({ call: 'open', sessionId, linkId, ...(options ? { options } : {}) });
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
    downloadMedia,
    collectGarbage: async () => {
      if (started) await request({ call: 'collectGarbage' });
    },
    networkStats: async () => (started && !closing ? ((await request({ call: 'stats' })) as NetworkStats) : undefined),
    close: async () => {
      if (!started) return;
      closing = true;
      const remote = await started;
      try {
        await send(remote, { call: 'shutdown' });
      } finally {
        await remote.stop();
      }
    },
  };
};
