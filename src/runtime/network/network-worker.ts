import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import type { Transferable } from 'node:worker_threads';
import { createPrisma } from '../db/client.ts';
import { routeLibsignalConsole } from '../libsignal-console.ts';
import { createLogger } from '../logger.ts';
import { createBaileysNetwork } from './baileys-network.ts';
import { mediaDispatcherFor, socketOptionsFor } from './baileys-target.ts';
import type { LinkMethod, NetworkThreadData, ThreadMessage, ThreadRequest } from './thread-protocol.ts';
import { MediaGoneError } from './media-gone.ts';
import type { GroupOps, NetworkLink, OutgoingContent, SendOptions, StatusContent } from '../ports/network.ts';

if (!parentPort) throw new Error('network-worker.ts runs only as the network thread');
// Baileys builds and formats `new Error().stack` two or three times per stanza (for timeouts and
// cancellations it almost never reports); at Node's ten frames that was a sixth of this thread's
// time. Errors logged from this thread keep their three innermost frames.
Error.stackTraceLimit = 3;
const port = parentPort;
const data = workerData as NetworkThreadData;
const db = createPrisma(data.databaseUrl);
const logger = createLogger(data.logLevel).child({ thread: 'network' });
routeLibsignalConsole(logger);
const network = createBaileysNetwork({
  db,
  logger,
  socket: socketOptionsFor(data.target),
  mediaDispatcher: mediaDispatcherFor(data.target),
  keepAliveIntervalMs: data.keepAliveIntervalMs,
  deviceListTtlMs: data.deviceListTtlMs,
  incomingStoreTimeoutMs: data.incomingStoreTimeoutMs,
});
const links = new Map<number, NetworkLink>();

const post = (message: ThreadMessage): void => port.postMessage(message);

// Received messages the main thread is writing, until it answers `stored` (the link bounds the wait).
let nextStoreId = 1;
const storing = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
const store = (linkId: number, item: unknown): Promise<void> =>
  new Promise((resolve, reject) => {
    const storeId = nextStoreId++;
    storing.set(storeId, { resolve, reject });
    post({ kind: 'event', linkId, event: 'incoming', item, storeId });
  });

// Buffers arrive as plain Uint8Arrays; Baileys wants Buffers.
const withBuffer = <T extends OutgoingContent | StatusContent>(content: T): T => {
  if (!('data' in content)) return content;
  const data: Uint8Array = content.data;
  return Buffer.isBuffer(data) ? content : { ...content, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) };
};

const callLink = async (link: NetworkLink, method: LinkMethod, args: unknown[]): Promise<unknown> => {
  switch (method) {
    case 'send':
      return link.send(args[0] as string, withBuffer(args[1] as OutgoingContent), args[2] as SendOptions | undefined);
    case 'edit':
      return link.edit(args[0] as string, args[1] as string, args[2] as string);
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

const open = async (sessionId: string, linkId: number): Promise<void> => {
  const link = await network.open(sessionId, {
    onQr: (qr) => post({ kind: 'event', linkId, event: 'qr', qr }),
    onOpen: (account) => post({ kind: 'event', linkId, event: 'open', account }),
    onClose: (closeKind, message) => post({ kind: 'event', linkId, event: 'close', closeKind, message }),
    onActivity: () => {
      // Every frame counts as life; the main thread only needs to hear it now and then.
      alive.add(linkId);
      if (!aliveTimer) {
        aliveTimer = setTimeout(reportAlive, data.activityEveryMs);
        aliveTimer.unref();
      }
    },
    onIncoming: (item) => store(linkId, item),
    onSendError: (waMessageId, reason) => post({ kind: 'event', linkId, event: 'sendError', waMessageId, reason }),
    onReceipts: (receipts) => post({ kind: 'event', linkId, event: 'receipts', receipts }),
  });
  links.set(linkId, link);
};

const handle = async (request: ThreadRequest): Promise<unknown> => {
  switch (request.call) {
    case 'open':
      return open(request.sessionId, request.linkId);
    case 'forget':
      return network.forget(request.sessionId);
    case 'hasCredentials':
      return network.hasCredentials(request.sessionId);
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
    case 'downloadMedia':
      return network.downloadMedia(request.media);
    case 'threadStats': {
      // In a worker, memoryUsage() reports this thread's isolate (only rss is the whole process's).
      const heap = getHeapStatistics();
      const usage = process.memoryUsage();
      return {
        heapUsedBytes: heap.used_heap_size,
        heapTotalBytes: heap.total_heap_size,
        externalBytes: usage.external,
        arrayBuffersBytes: usage.arrayBuffers,
      };
    }
    case 'collectGarbage':
      (globalThis as { gc?: () => void }).gc?.();
      return null;
    case 'shutdown':
      if (aliveTimer) clearTimeout(aliveTimer);
      aliveTimer = undefined;
      alive.clear();
      await Promise.all([...links.values()].map((link) => link.close()));
      links.clear();
      await db.$disconnect();
      return null;
  }
};

port.on('message', (request: ThreadRequest) => {
  handle(request).then(
    (value) => {
      // A download's stream moves to the main thread; its chunks then cross as they are read.
      if (value instanceof ReadableStream)
        port.postMessage({ kind: 'reply', id: request.id, ok: true, value } satisfies ThreadMessage, [
          // the global ReadableStream, which is node:stream/web's own, though the typings keep the two apart
          value as unknown as Transferable,
        ]);
      else post({ kind: 'reply', id: request.id, ok: true, value });
    },
    (err: unknown) =>
      post({
        kind: 'reply',
        id: request.id,
        ok: false,
        message: err instanceof Error ? err.message : String(err),
        ...(err instanceof MediaGoneError ? { mediaGone: true } : {}),
      }),
  );
});
post({ kind: 'ready' });
