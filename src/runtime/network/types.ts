/** Our port onto the messaging network; only src/runtime/network/baileys-*.ts implement it with Baileys. */

export type CloseKind =
  /** the server asked for a new connection (515 after pairing) */
  | 'restart'
  /** the phone removed this device, or the server refused the credentials */
  | 'loggedOut'
  /** the QR codes ran out with nobody scanning */
  | 'qrExpired'
  /** another client took over this device */
  | 'replaced'
  /** anything worth retrying: dropped socket, timeouts, 503 */
  | 'transient';

export interface LinkedAccount {
  /** user JID without device, e.g. 15550001111@s.whatsapp.net */
  jid: string;
  lid?: string;
  name?: string;
}

export interface LinkCallbacks {
  onQr: (qr: string) => void;
  onOpen: (account: LinkedAccount) => void;
  onClose: (kind: CloseKind, message: string) => void;
  /** any frame received: the link is alive */
  onActivity: () => void;
}

export interface NetworkLink {
  requestPairingCode: (phoneNumber: string) => Promise<string>;
  /** Closes the socket, keeping the credentials (shutdown, pause, manual disconnect). */
  close: () => Promise<void>;
  /** Removes this device from the account, then closes. */
  logout: () => Promise<void>;
}

export interface Network {
  /** Opens a link for a session with its stored credentials (or none yet: then a QR or pairing code follows). */
  open: (sessionId: string, callbacks: LinkCallbacks) => Promise<NetworkLink>;
  /** Deletes the stored credentials of a session. */
  forget: (sessionId: string) => Promise<void>;
  hasCredentials: (sessionId: string) => Promise<boolean>;
}
