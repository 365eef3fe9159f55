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
  | { kind: 'event'; linkId: number; event: 'incoming'; item: unknown }
  | { kind: 'event'; linkId: number; event: 'sendError'; waMessageId: string; reason: string }
  | { kind: 'event'; linkId: number; event: 'receipts'; receipts: Receipt[] };
