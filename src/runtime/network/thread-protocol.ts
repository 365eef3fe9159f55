/** The messages between the main thread and the network thread (see network-thread.ts). */
import type { NetworkTarget } from './baileys-target.ts';
import type { MediaLocator } from '../ports/incoming.ts';
import type { GroupOps, Receipt } from '../ports/network.ts';

export interface NetworkThreadData {
  databaseUrl: string;
  logLevel: string;
  target: NetworkTarget;
  keepAliveIntervalMs?: number;
  deviceListTtlMs?: number;
  /** how often at most the thread reports which links are alive (in one message for all of them) */
  activityEveryMs: number;
  /** how long a received message waits for the main thread's write before it is left unreceipted */
  incomingStoreTimeoutMs?: number;
}

export type LinkMethod =
  | 'send'
  | 'edit'
  | 'setPresence'
  | 'onNetwork'
  | 'sendStatus'
  | 'requestPairingCode'
  | 'close'
  | 'logout'
  | `groups.${keyof GroupOps}`;

export type ThreadRequest =
  | { id: number; call: 'open'; sessionId: string; linkId: number }
  | { id: number; call: 'forget' | 'hasCredentials'; sessionId: string }
  | { id: number; call: 'link'; linkId: number; method: LinkMethod; args: unknown[] }
  | { id: number; call: 'shutdown' | 'collectGarbage' | 'threadStats' }
  /** the answer to an `incoming` event: its message is on disk (or, with `error`, is not), so its receipt may go (or not) */
  | { id: number; call: 'stored'; storeId: number; error?: string }
  /** answered with a ReadableStream, transferred to the main thread, which pulls the file through it */
  | { id: number; call: 'downloadMedia'; media: MediaLocator };

export type ThreadMessage =
  | { kind: 'ready' }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; message: string; mediaGone?: boolean }
  | { kind: 'event'; linkId: number; event: 'qr'; qr: string }
  | { kind: 'event'; linkId: number; event: 'open'; account: { jid: string; lid?: string; name?: string } }
  | { kind: 'event'; linkId: number; event: 'close'; closeKind: string; message: string }
  | { kind: 'activity'; linkIds: number[] }
  /** answered with a `stored` request once the main thread has written the message */
  | { kind: 'event'; linkId: number; event: 'incoming'; item: unknown; storeId: number }
  | { kind: 'event'; linkId: number; event: 'sendError'; waMessageId: string; reason: string }
  | { kind: 'event'; linkId: number; event: 'receipts'; receipts: Receipt[] };
