import type { MediaLocator } from './incoming.ts';
import type { NetworkLink, NetworkStats } from './network.ts';

export type SessionStatus = 'DISCONNECTED' | 'CONNECTING' | 'QR_READY' | 'CONNECTED' | 'PAUSED';

export interface LiveView {
  status: SessionStatus;
  qrCode: string | null;
}

/** Every session's network link and live state (runtime/network/session-manager.ts). */
export interface Sessions {
  view(sessionId: string): LiveView | undefined;
  /** Resolves once the session's (or every session's) pending row writes are done. */
  settled(sessionId?: string): Promise<void>;
  link(sessionId: string): NetworkLink | undefined;
  connect(sessionId: string): Promise<void>;
  stop(sessionId: string, status: 'DISCONNECTED' | 'PAUSED', lastError?: string): Promise<void>;
  override(sessionId: string, status: SessionStatus): Promise<void>;
  /** The link stays up but the network limits it (a restriction): lastError says so, with a session.status event. */
  noteProblem(sessionId: string, lastError: string): Promise<void>;
  remove(sessionId: string): Promise<void>;
  pairingCode(sessionId: string, phoneNumber: string): Promise<string>;
  /** Before the service answers: sessions a stop left CONNECTED or QR_READY are shown as CONNECTING until they re-link. */
  markRelinking(): Promise<number>;
  resumeAll(): Promise<number>;
  /** Loads the links' code ahead of the first link (see Network.prepare). */
  prepare(): Promise<void>;
  closeAll(): Promise<void>;
  networkStats(): Promise<NetworkStats | undefined>;
  /** A received file, fetched and decrypted by the network; needs no live link. */
  downloadMedia(media: MediaLocator): Promise<ReadableStream<Uint8Array>>;
  collectGarbage(): Promise<void>;
  /** Several nodes: sessions this node just claimed, re-linked from their credentials. */
  adopt(sessionIds: string[]): Promise<number>;
  /** Several nodes: sessions this node lost; their links close at once, their rows are left to the new owner. */
  release(sessionIds: string[]): Promise<void>;
  /** Right before a send: whether this node still owns the session (its fencing epoch is the database's). */
  stillOwns(sessionId: string): Promise<boolean>;
}
