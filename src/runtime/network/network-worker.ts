// The network worker: every link's Baileys socket, its encryption and its key store, apart from the HTTP
// server. It runs as a child process (the default: forked with an IPC channel) or as a worker thread;
// the main side talks to it the same way in both (remote-network.ts, network-protocol.ts).
import { getHeapStatistics } from 'node:v8';
import { isMainThread, parentPort } from 'node:worker_threads';
import type { Db } from '../db/client.ts';
import { createPrisma } from '../db/client.ts';
import { routeLibsignalConsole } from '../libsignal-console.ts';
import { createLogger } from '../logger.ts';
import { collectAllGarbage, startMemoryReclaim } from '../memory-reclaim.ts';
import { createBaileysNetwork } from './baileys-network.ts';
import { mediaDispatcherFor, socketOptionsFor } from './baileys-target.ts';
import type { LinkMethod, NetworkMessage, NetworkRequest, NetworkWorkerData } from './network-protocol.ts';
import { MediaGoneError } from './media-gone.ts';
import { NotOnNetworkError } from './not-on-network.ts';
import type {
  ChatOps,
  GroupOps,
  Network,
  NetworkLink,
  NetworkStats,
  OpenOptions,
  OutgoingContent,
  SendOptions,
  StatusContent,
} from '../ports/network.ts';
import type { MessageKeyRef } from '../ports/incoming.ts';

// Baileys builds and formats `new Error().stack` two or three times per stanza (for timeouts and
// cancellations it almost never reports); at Node's ten frames that was a sixth of this worker's
// time. Errors logged from here keep their three innermost frames.
Error.stackTraceLimit = 3;

interface Channel {
  post: (message: NetworkMessage) => void;
  onRequest: (handler: (request: NetworkRequest) => void) => void;
}

const threadChannel = (): Channel => {
  const port = parentPort;
  if (!port) throw new Error('network-worker.ts runs only as the network process or thread');
  return { post: (message) => port.postMessage(message), onRequest: (handler) => port.on('message', handler) };
};

const processChannel = (): Channel => {
  const send = process.send?.bind(process);
  if (!send) throw new Error('network-worker.ts runs only as the network process (forked, with IPC) or thread');
  return {
    // Once the parent is gone there is no one to tell; the worker is exiting then (see below).
    post: (message) => {
      if (process.connected) send(message, undefined, undefined, () => undefined);
    },
    onRequest: (handler) => process.on('message', handler as (message: unknown) => void),
  };
};

const channel = isMainThread ? processChannel() : threadChannel();
const post = channel.post;

let data: NetworkWorkerData | undefined;
let db: Db | undefined;
let network: Network | undefined;
const links = new Map<number, NetworkLink>();
// Downloads the main side is reading, pulled one chunk per readMedia.
const downloads = new Map<number, ReadableStreamDefaultReader<Uint8Array>>();
let nextDownloadId = 1;
let stopReclaim: (() => void) | undefined;

const init = (given: NetworkWorkerData): void => {
  data = given;
  db = createPrisma(given.databaseUrl);
  const logger = createLogger(given.logLevel, { pretty: given.logPretty === true }).child({ network: isMainThread ? 'process' : 'thread' });
  routeLibsignalConsole(logger);
  if (given.memoryReclaim) stopReclaim = startMemoryReclaim({ logger });
  network = createBaileysNetwork({
    db,
    logger,
    socket: socketOptionsFor(given.target),
    mediaDispatcher: mediaDispatcherFor(given.target),
    keepAliveIntervalMs: given.keepAliveIntervalMs,
    deviceListTtlMs: given.deviceListTtlMs,
    incomingStoreTimeoutMs: given.incomingStoreTimeoutMs,
    notOnNetworkTtlMs: given.notOnNetworkTtlMs,
    history: given.history,
  });
};

// Received messages the main side is writing, until it answers `stored` (the link bounds the wait).
let nextStoreId = 1;
const storing = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
const store = (linkId: number, item: unknown): Promise<void> =>
  new Promise((resolve, reject) => {
    const storeId = nextStoreId++;
    storing.set(storeId, { resolve, reject });
    post({ kind: 'event', linkId, event: 'incoming', item, storeId });
  });

const started = (): { network: Network; data: NetworkWorkerData } => {
  if (!network || !data) throw new Error('the network worker has not been initialised');
  return { network, data };
};

// Buffers arrive as plain Uint8Arrays from a thread; Baileys wants Buffers.
const withBuffer = <T extends OutgoingContent | StatusContent>(content: T): T => {
  if (!('data' in content)) return content;
  const bytes: Uint8Array = content.data;
  return Buffer.isBuffer(bytes) ? content : { ...content, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
};

const callLink = async (link: NetworkLink, method: LinkMethod, args: unknown[]): Promise<unknown> => {
  switch (method) {
    case 'send':
      return link.send(args[0] as string, withBuffer(args[1] as OutgoingContent), args[2] as SendOptions | undefined);
    case 'edit':
      return link.edit(args[0] as string, args[1] as string, args[2] as string);
    case 'react':
      return link.react(args[0] as string, args[1] as MessageKeyRef, args[2] as string);
    case 'revoke':
      return link.revoke(args[0] as string, args[1] as string);
    case 'setPresence':
      return link.setPresence(args[0] as string, args[1] as 'composing' | 'paused');
    case 'onNetwork':
      return link.onNetwork(args[0] as string[]);
    case 'sendStatus':
      return link.sendStatus(withBuffer(args[0] as StatusContent), args[1] as string[], args[2] as SendOptions | undefined);
    case 'requestPairingCode':
      return link.requestPairingCode(args[0] as string);
    case 'close':
      return link.close();
    case 'logout':
      return link.logout();
    default: {
      if (method.startsWith('chats.')) {
        const chatOp = link.chats[method.slice('chats.'.length) as keyof ChatOps] as (...opArgs: unknown[]) => Promise<unknown>;
        return chatOp(...args);
      }
      const op = link.groups[method.slice('groups.'.length) as keyof GroupOps] as (...opArgs: unknown[]) => Promise<unknown>;
      return op(...args);
    }
  }
};

// Links heard from since the last report; one message for all of them every activityEveryMs.
const alive = new Set<number>();
let aliveTimer: NodeJS.Timeout | undefined;
const reportAlive = (): void => {
  aliveTimer = undefined;
  const linkIds = [...alive].filter((linkId) => links.has(linkId));
  alive.clear();
  if (linkIds.length > 0) post({ kind: 'activity', linkIds });
};

const open = async (sessionId: string, linkId: number, options?: OpenOptions): Promise<void> => {
  const { network: baileys, data: settings } = started();
  const link = await baileys.open(
    sessionId,
    {
      onQr: (qr) => post({ kind: 'event', linkId, event: 'qr', qr }),
      onOpen: (account) => post({ kind: 'event', linkId, event: 'open', account }),
      onClose: (closeKind, message) => post({ kind: 'event', linkId, event: 'close', closeKind, message }),
      onActivity: () => {
        // Every frame counts as life; the main side only needs to hear it now and then.
        alive.add(linkId);
        if (!aliveTimer) {
          aliveTimer = setTimeout(reportAlive, settings.activityEveryMs);
          aliveTimer.unref();
        }
      },
      onIncoming: (item) => store(linkId, item),
      onSendError: (waMessageId, reason, code) => post({ kind: 'event', linkId, event: 'sendError', waMessageId, reason, code }),
      onReceipts: (receipts) => post({ kind: 'event', linkId, event: 'receipts', receipts }),
      onPeople: (people) => post({ kind: 'event', linkId, event: 'people', people }),
      onChatEvent: (chat) => post({ kind: 'event', linkId, event: 'chat', chat }),
    },
    options,
  );
  links.set(linkId, link);
};

const readMedia = async (downloadId: number): Promise<Uint8Array | null> => {
  const reader = downloads.get(downloadId);
  if (!reader) throw new Error('this download is over');
  try {
    const { done, value } = await reader.read();
    if (!done) return value;
  } catch (err) {
    downloads.delete(downloadId);
    throw err;
  }
  downloads.delete(downloadId);
  return null;
};

const stats = (): NetworkStats => {
  // In a thread, memoryUsage() reports this thread's isolate, except rss, which is the whole process's.
  const heap = getHeapStatistics();
  const usage = process.memoryUsage();
  return {
    heapUsedBytes: heap.used_heap_size,
    heapTotalBytes: heap.total_heap_size,
    externalBytes: usage.external,
    arrayBuffersBytes: usage.arrayBuffers,
    ...(isMainThread ? { process: { pid: process.pid, rssBytes: usage.rss } } : {}),
  };
};

let stopping: Promise<void> | undefined;
const shutdown = (): Promise<void> => {
  stopping ??= (async () => {
    if (aliveTimer) clearTimeout(aliveTimer);
    stopReclaim?.();
    aliveTimer = undefined;
    alive.clear();
    await Promise.allSettled([...downloads.values()].map((reader) => reader.cancel()));
    downloads.clear();
    await Promise.allSettled([...links.values()].map((link) => link.close()));
    links.clear();
    await db?.$disconnect();
  })();
  return stopping;
};

const handle = async (request: NetworkRequest): Promise<unknown> => {
  switch (request.call) {
    case 'init':
      init(request.data);
      return null;
    case 'open':
      return open(request.sessionId, request.linkId, request.options);
    case 'forget':
      return started().network.forget(request.sessionId);
    case 'hasCredentials':
      return started().network.hasCredentials(request.sessionId);
    case 'link': {
      const link = links.get(request.linkId);
      if (!link && (request.method === 'close' || request.method === 'logout')) return null;
      if (!link) throw new Error('this link is closed');
      const result = await callLink(link, request.method, request.args);
      if (request.method === 'close' || request.method === 'logout') links.delete(request.linkId);
      return result;
    }
    case 'stored': {
      const waiting = storing.get(request.storeId);
      storing.delete(request.storeId);
      if (request.error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(request.error));
      return null;
    }
    case 'downloadMedia': {
      const stream = await started().network.downloadMedia(request.media);
      const downloadId = nextDownloadId++;
      downloads.set(downloadId, stream.getReader());
      return downloadId;
    }
    case 'readMedia':
      return readMedia(request.downloadId);
    case 'cancelMedia': {
      const reader = downloads.get(request.downloadId);
      downloads.delete(request.downloadId);
      await reader?.cancel();
      return null;
    }
    case 'stats':
      return stats();
    case 'collectGarbage':
      collectAllGarbage();
      return null;
    case 'shutdown':
      await shutdown();
      return null;
  }
};

channel.onRequest((request) => {
  handle(request).then(
    (value) => post({ kind: 'reply', id: request.id, ok: true, value }),
    (err: unknown) =>
      post({
        kind: 'reply',
        id: request.id,
        ok: false,
        message: err instanceof Error ? err.message : String(err),
        ...(err instanceof MediaGoneError ? { mediaGone: true } : {}),
        ...(err instanceof NotOnNetworkError ? { notOnNetwork: true } : {}),
      }),
  );
});

if (isMainThread) {
  // The service's own signal handling stops this process (shutdown, then disconnect); a SIGINT or
  // SIGTERM sent to the whole process group (Ctrl-C, systemd) must not cut the links first.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
  // The parent is gone (even by SIGKILL: its end of the IPC channel closes) or is done with this
  // process: the links end and the process exits, quickly, so that a restarted service never meets
  // this one still linked with the same credentials.
  process.once('disconnect', () => {
    setTimeout(() => process.exit(0), 2_000).unref();
    void shutdown().finally(() => process.exit(0));
  });
}
post({ kind: 'ready' });
