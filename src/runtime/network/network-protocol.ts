/**
 * The messages between the service's main thread and the network worker (see remote-network.ts), the
 * same whether the worker is a child process (over IPC, advanced serialization) or a worker thread.
 */
import type { NetworkTarget } from './baileys-target.ts';
import type { MediaLocator } from '../ports/incoming.ts';
import type { ChatEvent, ChatOps, GroupOps, HistorySettings, KnownPerson, OpenOptions, Receipt } from '../ports/network.ts';

export interface NetworkWorkerData {
  databaseUrl: string;
  logLevel: string;
  /** human-readable lines, as the main thread writes them when its stdout (which the worker shares) is a terminal */
  logPretty?: boolean;
  target: NetworkTarget;
  keepAliveIntervalMs?: number;
  deviceListTtlMs?: number;
  /** how often at most the worker reports which links are alive (in one message for all of them) */
  activityEveryMs: number;
  /** how long a received message waits for the main thread's write before it is left unreceipted */
  incomingStoreTimeoutMs?: number;
  /** how long a user the network does not know is believed absent before a send asks again */
  notOnNetworkTtlMs?: number;
  /** history sync from the phone (off when not given) */
  history?: HistorySettings;
  /** the worker gives memory back once quiet after a busy period (memory-reclaim.ts) */
  memoryReclaim?: boolean;
}

export type LinkMethod =
  | 'send'
  | 'edit'
  | 'react'
  | 'revoke'
  | 'setPresence'
  | 'onNetwork'
  | 'sendStatus'
  | 'requestPairingCode'
  | 'close'
  | 'logout'
  | `groups.${keyof GroupOps}`
  | `chats.${keyof ChatOps}`;

export type NetworkRequest =
  /** the first request, once the worker said `ready` */
  | { id: number; call: 'init'; data: NetworkWorkerData }
  | { id: number; call: 'open'; sessionId: string; linkId: number; options?: OpenOptions }
  | { id: number; call: 'forget' | 'hasCredentials'; sessionId: string }
  | { id: number; call: 'link'; linkId: number; method: LinkMethod; args: unknown[] }
  | { id: number; call: 'shutdown' | 'collectGarbage' | 'stats' }
  /** the answer to an `incoming` event: its message is on disk (or, with `error`, is not), so its receipt may go (or not) */
  | { id: number; call: 'stored'; storeId: number; error?: string }
  /** answered with a download id once the file is found; its bytes are then pulled with readMedia */
  | { id: number; call: 'downloadMedia'; media: MediaLocator }
  /** answered with the download's next chunk, or null at its end (then the download is gone) */
  | { id: number; call: 'readMedia'; downloadId: number }
  /** the reader went away: the worker stops fetching */
  | { id: number; call: 'cancelMedia'; downloadId: number };

export type NetworkMessage =
  | { kind: 'ready' }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; message: string; mediaGone?: boolean; notOnNetwork?: boolean }
  | { kind: 'event'; linkId: number; event: 'qr'; qr: string }
  | { kind: 'event'; linkId: number; event: 'open'; account: { jid: string; lid?: string; name?: string } }
  | { kind: 'event'; linkId: number; event: 'close'; closeKind: string; message: string }
  | { kind: 'activity'; linkIds: number[] }
  /** answered with a `stored` request once the main thread has written the message */
  | { kind: 'event'; linkId: number; event: 'incoming'; item: unknown; storeId: number }
  | { kind: 'event'; linkId: number; event: 'sendError'; waMessageId: string; reason: string; code?: string }
  | { kind: 'event'; linkId: number; event: 'receipts'; receipts: Receipt[] }
  | { kind: 'event'; linkId: number; event: 'people'; people: KnownPerson[] }
  | { kind: 'event'; linkId: number; event: 'chat'; chat: ChatEvent };
