/** Our port onto the messaging network; only src/runtime/network/baileys-*.ts implement it with Baileys. */
import type { Fence } from './cluster.ts';
import type { MediaLocator, MessageKeyRef, ReceivedMessage } from './incoming.ts';

/**
 * The name of the error a download rejects with when the media host answered that it no longer has the
 * file (404 or 410); errors cross the thread boundary, so it is told by name.
 */
export type MediaGoneErrorName = 'MediaGoneError';

/**
 * The name of the error a 1:1 send rejects with when the recipient is not on the network (it has no
 * devices there): nothing was sent. Told by name, as MediaGoneErrorName.
 */
export type NotOnNetworkErrorName = 'NotOnNetworkError';

export type CloseKind =
  /** the server asked for a new connection (515 after pairing) */
  | 'restart'
  /** the phone removed this device, or the server refused the credentials */
  | 'loggedOut'
  /** the QR codes ran out with nobody scanning */
  | 'qrExpired'
  /** another client took over this device */
  | 'replaced'
  /** the network refused the login: the number is banned (failure 403 or 406), or for a time (402) */
  | 'banned'
  /** anything worth retrying: dropped socket, timeouts, 503 */
  | 'transient'
  /** the database refused the link's key or credential write: another node holds the session now */
  | 'fenced';

export interface LinkedAccount {
  /** user JID without device, e.g. 15550001111@s.whatsapp.net */
  jid: string;
  lid?: string;
  name?: string;
}

export type MediaType = 'image' | 'video' | 'audio' | 'document';

export interface ButtonSpec {
  type: 'reply' | 'url' | 'call' | 'copy';
  text: string;
  id?: string;
  url?: string;
  phoneNumber?: string;
  copyCode?: string;
}

/** The message a reply quotes: its key, and the message itself (proto.Message, base64), else its text. */
export interface QuotedMessage {
  key: MessageKeyRef;
  message?: string;
  text: string;
}

/** A reply's quote and the people a message mentions (user JIDs): every kind of message below carries them. */
export interface ReplyContext {
  quoted?: QuotedMessage;
  mentions?: string[];
}

export type OutgoingContent = (
  | { kind: 'text'; text: string }
  | { kind: 'media'; mediaType: MediaType; data: Buffer; mimetype?: string; caption?: string; fileName?: string; ptt?: boolean }
  | { kind: 'buttons'; body: string; header?: string; footer?: string; buttons: ButtonSpec[] }
  | { kind: 'contact'; displayName: string; phone: string }
  | { kind: 'location'; latitude: number; longitude: number; name?: string; address?: string }
  | PollContent
) &
  ReplyContext;

/**
 * A poll: its options in order, and how many may be chosen (1: one; 0: any number). The secret its votes
 * are encrypted with is chosen before the send and kept with the record, so a resend after a crash
 * carries the same one and votes cast on either copy decrypt.
 */
export interface PollContent {
  kind: 'poll';
  name: string;
  options: string[];
  selectableCount: number;
  /** 32 random bytes, base64: the poll's messageSecret */
  messageSecret: string;
}

export interface SendOptions {
  /** the network message id to use; a resend with the same id shows once on the phone */
  messageId?: string;
}

export interface SendResult {
  waMessageId: string;
  remoteJid: string;
  /** the recipient's LID, when the network told it (1:1 sends) */
  remoteLid?: string;
  /** the message as it went out (an encoded proto.Message), kept so a retry receipt can be answered */
  message?: Uint8Array;
}

export interface GroupMember {
  /** the member's phone-number JID when the network shows it, else its LID JID */
  id: string;
  /** extension: the member's phone number (digits), null when the member hides it */
  phoneNumber: string | null;
  /** extension: the member's LID, when the network told it */
  lid: string | null;
  admin?: 'admin' | 'superadmin';
}

export interface GroupInfo {
  id: string;
  subject: string;
  desc: string;
  participants: GroupMember[];
  announce: boolean;
  owner?: string;
  creation?: number;
}

export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';

export interface ParticipantOutcome {
  jid: string;
  /** the network's per-participant status, '200' when done */
  status: string;
}

export interface GroupOps {
  list: () => Promise<GroupInfo[]>;
  create: (subject: string, participants: string[]) => Promise<GroupInfo>;
  join: (inviteCode: string) => Promise<string>;
  metadata: (groupId: string) => Promise<GroupInfo>;
  setSubject: (groupId: string, subject: string) => Promise<void>;
  setDescription: (groupId: string, description: string) => Promise<void>;
  leave: (groupId: string) => Promise<void>;
  participants: (groupId: string, jids: string[], action: ParticipantAction) => Promise<ParticipantOutcome[]>;
  setAdminOnly: (groupId: string, adminOnly: boolean) => Promise<void>;
  inviteCode: (groupId: string) => Promise<string>;
}

export type StatusContent =
  | { kind: 'text'; text: string; backgroundColor?: string }
  | { kind: 'media'; mediaType: 'image' | 'video' | 'audio'; data: Buffer; mimetype?: string; caption?: string };

export type ReceiptKind = 'delivered' | 'read' | 'played';

/** A recipient acknowledged one of our sent messages. */
export interface Receipt {
  /** the network id of our message */
  waMessageId: string;
  /** the chat it went to: the recipient's JID, or the group's */
  chatJid: string;
  /** who acknowledged it: a user JID without device (in a group, the member); the phone-number JID when known */
  recipient: string;
  /** the recipient's LID, when the network told it */
  recipientLid?: string;
  kind: ReceiptKind;
  /** when, as the receipt says (ms since the epoch; the network counts in seconds) */
  at: number;
}

/** A person the network named both ways: the phone-number JID and the LID, both without device. */
export interface KnownPerson {
  pn: string;
  lid: string;
}

/**
 * The LID-phone number pairs an account's sessions have learnt (each link's stored LID mappings: from
 * messages, receipts, sends, group reads), read from the database so any node and any request sees them.
 */
export type KnownPeople = (accountId: string, jids: string[]) => Promise<KnownPerson[]>;

/** What the network says of one phone number (the number check). */
export interface NumberOnNetwork {
  /** the phone-number JID asked about */
  jid: string;
  onNetwork: boolean;
  /** its LID, when the network told it */
  lid: string | null;
}

/** A contact's presence as the network tells it: online or not, typing, recording a voice note. */
export type PresenceState = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';

/** What a link hears about chats beside messages, and messages it cannot read yet (chats.ts on the service side). */
/** History sync from the phone (docs/conversations.md, History from the phone): how far back, full or recent, the largest blob. */
export interface HistorySettings {
  /** messages older than this many days are not stored; 0 turns history sync off */
  days: number;
  /** ask the phone for its full history (else its recent months), and take its FULL chunks */
  full: boolean;
  /** a chunk whose blob is larger than this is not downloaded */
  maxBytes: number;
  /** between chunks, a full collection once the link's thread's heap grew this much (MEMORY_RECLAIM); none when absent */
  collectEveryBytes?: number;
}

/** What a history chunk is (WAProto HistorySync.HistorySyncType, lower case). */
export type HistorySyncKind = 'initial_bootstrap' | 'recent' | 'full' | 'push_name' | 'on_demand' | 'other';

export type ChatEvent =
  | {
      kind: 'presence';
      /** the chat the presence is about: the person, or the group they type in */
      chatJid: string;
      /** who: the phone-number JID when known, else the LID */
      from: string;
      fromLid: string | null;
      presence: PresenceState;
      /** when last seen (ms since the epoch), when the network told it */
      lastSeen: number | null;
    }
  | {
      kind: 'call';
      callId: string;
      /** the caller: the phone-number JID when known, else the LID */
      from: string;
      fromLid: string | null;
      /** the JID the call can be rejected with (as the network named the caller) */
      callerJid: string;
      groupJid: string | null;
      isVideo: boolean;
      /** offer (ringing), reject, accept, timeout, terminate */
      status: string;
      offline: boolean;
      /** when (ms since the epoch) */
      at: number;
    }
  | {
      /** a message the link could not decrypt yet; it asked the sender for it again, and a resend keeps this id */
      kind: 'waiting';
      waMessageId: string;
      /** the chat and the sender, as a received message names them (phone-number JID when known, else LID) */
      chatJid: string;
      chatLid: string | null;
      from: string;
      fromLid: string | null;
      fromMe: boolean;
      /** the message's time as the network stamped it (Unix seconds) */
      messageTimestamp: number;
    }
  | {
      /**
       * The account's own state of a chat as another of its devices set it: archived, pinned, muted or
       * marked read / unread there (app state), or read there (a read-self receipt). Only what changed is set.
       */
      kind: 'chat-state';
      /** the chat: a person's phone-number JID where known (else the LID JID), or a group's JID */
      chatJid: string;
      chatLid: string | null;
      archived?: boolean;
      pinned?: boolean;
      muted?: boolean;
      /** read on another device: nothing unread since */
      read?: boolean;
      /** marked unread on another device */
      markedUnread?: boolean;
    }
  | {
      /** a group's subject as the network told it: when it changed, or when this account joined or made the group */
      kind: 'group';
      groupJid: string;
      subject: string;
    }
  | {
      /**
       * A history notification the link took (its receipt went to the network, which will not send it
       * again) and is about to download: the chunk is stored next, or lost if the process stops first.
       */
      kind: 'history-taken';
      syncType: HistorySyncKind;
      chunkOrder: number | null;
    }
  | {
      /** one chunk of the phone's history sync: its messages are stored as history, with no per-message events */
      kind: 'history';
      syncType: HistorySyncKind;
      chunkOrder: number | null;
      /** 0-100, as the phone counts it */
      progress: number | null;
      /** the network id of the on-demand request it answers (fetchHistory) */
      requestId: string | null;
      /** chats the chunk names */
      chats: number;
      messages: ReceivedMessage[];
      /**
       * what happened to messages since, as the chunk carries it: each message's reactions (WebMessageInfo
       * reactions) and reactions, edits and deletes sent as messages of their own; applied once the
       * chunk's messages are stored
       */
      changes: ReceivedMessage[];
      /** messages older than the days setting, or not storable (protocol messages, stubs) */
      skipped: number;
      /** push names: a person's JID and name */
      names: Array<{ jid: string; name: string }>;
      /**
       * the archive, pin and mute of the chunk's chats (as `chat-state` sets them; rc14 merges the first app
       * state sync's changes into them), applied once its messages are stored
       */
      states: HistoryChatState[];
    };

/** A history chunk's chat as its archive, pin and mute stand (ChatEvent `history` states). */
export type HistoryChatState = Pick<Extract<ChatEvent, { kind: 'chat-state' }>, 'chatJid' | 'chatLid' | 'archived' | 'pinned' | 'muted'>;

/** Operations on chats beside sends (extensions: number check, read marks, presence, calls). */
export interface ChatOps {
  /** Which of these phone-number JIDs are on the network, with their LIDs: what is known answers at once, the rest in one usync. */
  checkNumbers: (jids: string[]) => Promise<NumberOnNetwork[]>;
  /**
   * Sends read receipts for received messages of a chat: those with these ids, or every one this link
   * received in the chat and did not mark yet. Answers the ids marked and the ids it did not know.
   */
  markRead: (chatJid: string, waMessageIds?: string[]) => Promise<{ read: string[]; unknown: string[] }>;
  /** Asks the network for a contact's (or group's) presence updates. */
  subscribePresence: (jid: string) => Promise<void>;
  /** Our own presence: online (available) or not. */
  setOwnPresence: (presence: 'available' | 'unavailable') => Promise<void>;
  /** Rejects an incoming call. */
  rejectCall: (callId: string, callerJid: string) => Promise<void>;
  /**
   * The URL of a person's or group's profile picture, full size (`image`) or its thumbnail (`preview`);
   * null when there is none or its owner hides it from this account (the network does not say which).
   */
  profilePicture: (jid: string, size: 'image' | 'preview') => Promise<string | null>;
  /**
   * Asks the phone for `count` messages of a chat older than `oldest` (on-demand history sync): they come
   * later as a `history` chat event of kind on_demand. Answers the request's network id.
   */
  fetchHistory: (count: number, oldest: { key: MessageKeyRef; timestampMs: number }) => Promise<string>;
}

export interface LinkCallbacks {
  onQr: (qr: string) => void;
  onOpen: (account: LinkedAccount) => void;
  onClose: (kind: CloseKind, message: string) => void;
  /** any frame received: the link is alive */
  onActivity: () => void;
  /**
   * A received message, before the network is told it arrived: resolves once what the service keeps of
   * it is on disk (the network sends its delivery receipt then); a rejection leaves it unreceipted.
   */
  onIncoming: (message: ReceivedMessage) => Promise<void>;
  /** the network refused a message after accepting the send (an error ack, whose code is `code`: '429' a rate answer, '463' a restriction) */
  onSendError: (waMessageId: string, reason: string, code?: string) => void;
  /** recipients' delivery, read and played receipts for messages this link sent, in the order they came */
  onReceipts: (receipts: Receipt[]) => void;
  /** people whose phone number and LID the network told together (each pair once per link) */
  onPeople: (people: KnownPerson[]) => void;
  /**
   * presence updates, calls and waiting messages (optional: a link opened only to log out hears none); for
   * a history chunk, a promise (never rejecting) that settles once it is stored: the link takes its next
   * chunk after that (a link in another thread or process does not wait)
   */
  onChatEvent?: (event: ChatEvent) => void | Promise<unknown>;
}

export interface NetworkLink {
  requestPairingCode: (phoneNumber: string) => Promise<string>;
  /** Closes the socket, keeping the credentials (shutdown, pause, manual disconnect). */
  close: () => Promise<void>;
  /** Removes this device from the account, then closes. */
  logout: () => Promise<void>;
  /**
   * Sends one message. A 1:1 send to a user the network does not know rejects with NotOnNetworkError
   * before anything leaves; the answer is the same look-up the send makes to find the user's devices,
   * and is kept (see BaileysNetworkOptions.notOnNetworkTtlMs).
   */
  send: (jid: string, content: OutgoingContent, options?: SendOptions) => Promise<SendResult>;
  edit: (remoteJid: string, waMessageId: string, text: string) => Promise<void>;
  /** Reacts to a message in a chat with an emoji; an empty emoji removes the reaction. Answers the reaction's network id. */
  react: (chatJid: string, key: MessageKeyRef, emoji: string) => Promise<string>;
  /** Deletes one of our sent messages for everyone. */
  revoke: (remoteJid: string, waMessageId: string) => Promise<void>;
  setPresence: (jid: string, presence: 'composing' | 'paused') => Promise<void>;
  /** Which of these user JIDs exist on the network. */
  onNetwork: (jids: string[]) => Promise<Set<string>>;
  /** A fresh network message id for a message about to be sent. */
  newMessageId: () => string;
  groups: GroupOps;
  chats: ChatOps;
  /** Publishes a status to status@broadcast for the listed recipients. */
  sendStatus: (content: StatusContent, recipients: string[], options?: SendOptions) => Promise<SendResult>;
}

export interface OpenOptions {
  /** several nodes: the link's key and credential writes land only while the database holds this claim; refused, the link closes as `fenced` */
  fence?: Fence;
}

export interface Network {
  /** Opens a link for a session with its stored credentials (or none yet: then a QR or pairing code follows). */
  open: (sessionId: string, callbacks: LinkCallbacks, options?: OpenOptions) => Promise<NetworkLink>;
  /** Deletes the stored credentials of a session. */
  forget: (sessionId: string) => Promise<void>;
  hasCredentials: (sessionId: string) => Promise<boolean>;
  /**
   * Fetches and decrypts a received file; needs no live link. Rejects with MediaGoneError when the
   * media host no longer has it. The stream is pulled as it is read, so a slow reader holds little.
   */
  downloadMedia: (media: MediaLocator) => Promise<ReadableStream<Uint8Array>>;
  /** Releases what the network holds beyond its links (its process or thread); after closeAll of every link. */
  close: () => Promise<void>;
  /**
   * Loads what a first link needs (Baileys, libsignal, WhatsApp's protobufs), when the network loads
   * them on first use; resolves once done.
   */
  prepare?: () => Promise<void>;
  /**
   * Collects the garbage of the heap the links live on when that is a process or thread of its own
   * (the main heap is the caller's to collect), memory-reducing: V8's pooled pages go back to the
   * system too. For memory measurements.
   */
  collectGarbage: () => Promise<void>;
  /** The memory of the process or thread the links live on, when they have one of their own (else undefined). */
  networkStats: () => Promise<NetworkStats | undefined>;
}

export interface NetworkStats {
  heapUsedBytes: number;
  heapTotalBytes: number;
  /** memory of the links' objects held outside V8's heap (Buffers, native bindings) */
  externalBytes: number;
  /** the part of externalBytes held by ArrayBuffers and Buffers */
  arrayBuffersBytes: number;
  /** the network process's resident memory and id; absent for a thread, whose RSS is the service's */
  process?: { pid: number; rssBytes: number };
}
