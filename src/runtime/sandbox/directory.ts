import type { PollView } from './polls.ts';
import { randomInt } from 'node:crypto';
import { Curve } from 'baileys';
import type { KeyPair } from 'baileys';
import { PhoneSignal } from './signal.ts';

/** A companion device linked to a virtual phone (what a Baileys socket becomes after pairing). */
export interface LinkedDevice {
  deviceId: number;
  noisePublic: Uint8Array;
  identityPublic: Uint8Array;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  preKeys: Map<number, Uint8Array>;
  loggedOut: boolean;
  /** newly paired: its first login gets the phone's history sync (what its DeviceProps asked for); not kept in saved state */
  historyDue?: { requireFullSync: boolean; recentDays?: number };
}

export interface InboxEntry {
  id: string;
  from: string;
  chat: string;
  kind: string;
  content: string;
  caption?: string;
  mimetype?: string;
  fileName?: string;
  /** for media: the decrypted file's size and SHA-256, proof the bytes arrived */
  size?: number;
  sha256?: string;
  raw?: unknown;
  receivedAt: string;
  /** how many more times the same message id arrived (a real app shows it once) */
  duplicates: number;
  /** who the phone's receipts for this message name: itself as the sender addressed it, and in a group the group */
  receiptAs?: { from: string; participant?: string };
  /** when the phone last sent a read (or, for a voice note, played) receipt for it */
  readAt?: string;
  playedAt?: string;
  /** when the sender deleted it for everyone (a revoke arrived) */
  deletedAt?: string;
  /** a poll: its question, options and how many may be chosen (0: any number) */
  poll?: PollView;
  /** a reply: the quoted message's id and its sender as the reply names them (contextInfo's stanzaId, participant) */
  quoted?: { id: string; participant: string | null };
  /** the JIDs the message mentions, as the sender wrote them (numbers or LIDs) */
  mentions?: string[];
  /** a reaction, edit or delete: the key of the message it points at, as the sender wrote it */
  target?: MessageKeyView;
}

/** A message key as a phone decrypted it; `fromMe` is from the sender's side (true: the sender's own message). */
export interface MessageKeyView {
  id: string;
  remoteJid: string | null;
  fromMe: boolean;
  participant: string | null;
}

/** A trusted-contact token a phone handed a linked account when it first wrote to it (see Router.handToken). */
export interface IssuedToken {
  token: Uint8Array;
  t: number;
  /** the linked devices (`<deviceId>`) it reached, each told once */
  toldDevices: Set<number>;
}

/** A phone number on the sandbox network, with its own identity and an inbox of what it received. */
export interface VirtualPhone {
  number: string;
  name: string;
  jid: string;
  lid: string;
  identity: KeyPair;
  registrationId: number;
  devices: Map<number, LinkedDevice>;
  inbox: InboxEntry[];
  /** the inbox by chat and message id, so a repeated id is found without scanning */
  inboxIndex: Map<string, InboxEntry>;
  signal: PhoneSignal;
  /** the phone hides its number: it is named by its LID alone, with no phone number beside it */
  hideNumber: boolean;
  /** 1:1 messages from a linked account that show no privacy token this phone issued are refused (ack 463) */
  requireToken: boolean;
  /** privacy tokens this phone issued, by the number of the account it wrote to */
  tokensIssued: Map<string, IssuedToken>;
}

export class Directory {
  private readonly byNumber = new Map<string, VirtualPhone>();
  private readonly byLid = new Map<string, VirtualPhone>();
  private nextLid = 100_000_000_000 + randomInt(1_000_000);

  add(number: string, name = `Phone ${number}`): VirtualPhone {
    const existing = this.byNumber.get(number);
    if (existing) return existing;
    const identity = Curve.generateKeyPair();
    const registrationId = randomInt(1, 16_380);
    const phone: VirtualPhone = {
      number,
      name,
      jid: `${number}@s.whatsapp.net`,
      lid: `${this.nextLid++}@lid`,
      identity,
      registrationId,
      devices: new Map(),
      inbox: [],
      inboxIndex: new Map(),
      signal: new PhoneSignal(identity, registrationId),
      hideNumber: false,
      requireToken: false,
      tokensIssued: new Map(),
    };
    this.byNumber.set(number, phone);
    this.byLid.set(phone.lid, phone);
    return phone;
  }

  /** A phone kept from an earlier run (see state.ts), with its LID. */
  restore(phone: VirtualPhone): void {
    this.byNumber.set(phone.number, phone);
    this.byLid.set(phone.lid, phone);
    const lid = Number(phone.lid.split('@')[0]);
    if (lid >= this.nextLid) this.nextLid = lid + 1;
  }

  get(number: string): VirtualPhone | undefined {
    return this.byNumber.get(number);
  }

  /** By phone-number JID or LID, with or without a device suffix. */
  find(jid: string): VirtualPhone | undefined {
    const [userPart, server] = jid.split('@');
    const user = (userPart ?? '').split(':')[0] ?? '';
    if (server === 'lid') return this.byLid.get(`${user}@lid`);
    return this.byNumber.get(user);
  }

  all(): VirtualPhone[] {
    return [...this.byNumber.values()];
  }
}
