import { randomBytes } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { Directory, VirtualPhone } from './directory.ts';
import type { Addressing } from './addressing.ts';
import type { Connection } from './server.ts';

/** A read receipt a linked device sent for a message a phone sent: who read it, from which device, when. */
export interface ReadMark {
  /** the number of the account whose device read it */
  by: string;
  deviceId: number;
  at: string;
}

/** What a phone's user sees of one of their own presence-visible states, as a linked account set it. */
export interface AccountPresence {
  presence: 'available' | 'unavailable';
  /** the name the stanza carried */
  name: string;
  at: string;
}

export type PhonePresence = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';

/** A call a phone placed, as the sandbox tracks it. */
export interface CallView {
  callId: string;
  from: string;
  to: string;
  isVideo: boolean;
  status: 'ringing' | 'rejected';
  /** the linked device that rejected it (`<number>:<deviceId>`) */
  rejectedBy?: string;
  at: string;
}

const REMEMBERED = 4096;
const now = (): string => String(Math.floor(Date.now() / 1000));

const remember = <K, V>(map: Map<K, V>, key: K, value: V): void => {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value as K);
};

interface ChatsDeps {
  directory: Directory;
  addressing: Addressing;
  /** the open connections of a number's linked devices */
  connectionsOf: (number: string) => Connection[];
}

/**
 * What the sandbox models beside messages: read receipts a linked device sends for a phone's messages,
 * presence (a linked account subscribing to a phone, a phone online or typing, an account's own
 * presence) and calls (a phone ringing a linked account, the account rejecting it).
 */
/** An account's typing as a phone was shown it. */
export interface TypingSeen {
  from: string;
  state: 'composing' | 'recording' | 'paused';
  at: string;
}

const TYPING_KEPT = 200;

export class SandboxChats {
  /** by `<sender number>\u0000<message id>` */
  private readonly reads = new Map<string, ReadMark[]>();
  /** per phone number, the numbers of the linked accounts subscribed to its presence */
  private readonly subscribers = new Map<string, Set<string>>();
  private readonly own = new Map<string, AccountPresence>();
  private readonly calls = new Map<string, CallView>();
  /** per phone number, what it was shown of accounts typing to it */
  private readonly typing = new Map<string, TypingSeen[]>();

  constructor(private readonly deps: ChatsDeps) {}

  /**
   * A linked device's read receipt (`type=read`, or `read-self` when its account hides read receipts:
   * then the sender learns nothing): `to` names the sender (a group and `participant` in a group).
   */
  readReceipt(conn: Connection, node: BinaryNode): void {
    if (node.attrs.type !== 'read' || !conn.phone || !conn.device) return;
    const sender = this.deps.directory.find(node.attrs.participant ?? node.attrs.to ?? '');
    if (!sender) return;
    const ids = [node.attrs.id, ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((item) => item.attrs.id)];
    const mark: ReadMark = { by: conn.phone.number, deviceId: conn.device.deviceId, at: new Date().toISOString() };
    for (const id of ids) {
      if (!id) continue;
      const key = `${sender.number}\u0000${id}`;
      remember(this.reads, key, [...(this.reads.get(key) ?? []), mark]);
    }
  }

  /** The read receipts linked devices sent for a message this phone sent. */
  readsOf(phone: VirtualPhone, id: string): ReadMark[] {
    return [...(this.reads.get(`${phone.number}\u0000${id}`) ?? [])];
  }

  /** A companion's `presence` stanza: a subscription to someone's presence, or its account's own presence. */
  presence(conn: Connection, node: BinaryNode): void {
    const account = conn.phone?.number;
    if (!account) return;
    const { type, to, name } = node.attrs;
    if (type === 'subscribe' && to) {
      const target = this.deps.directory.find(to);
      if (!target) return;
      const subscribed = this.subscribers.get(target.number) ?? new Set<string>();
      subscribed.add(account);
      this.subscribers.set(target.number, subscribed);
      return;
    }
    if (type === 'available' || type === 'unavailable') {
      this.own.set(account, { presence: type, name: name ?? '', at: new Date().toISOString() });
    }
  }

  /**
   * A linked device types, records or stops in a chat (`<chatstate to><composing|paused/></chatstate>`,
   * rc14's sendPresenceUpdate): the phone it is addressed to shows it, kept here for tests to read.
   */
  chatstate(conn: Connection, node: BinaryNode): void {
    const account = conn.phone?.number;
    const target = node.attrs.to ? this.deps.directory.find(node.attrs.to) : undefined;
    const child = Array.isArray(node.content) ? (node.content[0] as BinaryNode | undefined) : undefined;
    if (!account || !target || !child) return;
    const state = child.tag === 'composing' ? (child.attrs.media === 'audio' ? 'recording' : 'composing') : 'paused';
    const seen = this.typing.get(target.number) ?? [];
    seen.push({ from: account, state, at: new Date().toISOString() });
    if (seen.length > TYPING_KEPT) seen.shift();
    this.typing.set(target.number, seen);
  }

  /** What a phone was shown of accounts typing to it, oldest first (the last TYPING_KEPT). */
  typingSeenBy(number: string): TypingSeen[] {
    return [...(this.typing.get(number) ?? [])];
  }

  /** The presence a linked account last set for itself (what its contacts would see). */
  accountPresence(number: string): AccountPresence | undefined {
    return this.own.get(number);
  }

  /**
   * A phone goes online or offline (a `presence`) or types, records or stops (a `chatstate`) in its 1:1
   * chat with `toNumber`: the linked devices of that account receive it when the account subscribed to
   * this phone's presence, as WhatsApp sends presence only to subscribers. Answers how many devices got it.
   */
  phonePresence(phone: VirtualPhone, toNumber: string, presence: PhonePresence): number {
    if (!this.subscribers.get(phone.number)?.has(toNumber)) return 0;
    const from = this.deps.addressing.userJid(phone);
    const node: BinaryNode =
      presence === 'available' || presence === 'unavailable'
        ? { tag: 'presence', attrs: { from, type: presence, ...(presence === 'unavailable' ? { last: now() } : {}) } }
        : {
            tag: 'chatstate',
            attrs: { from },
            content: [
              presence === 'recording'
                ? { tag: 'composing', attrs: { media: 'audio' } }
                : { tag: presence === 'paused' ? 'paused' : 'composing', attrs: {} },
            ],
          };
    const conns = this.deps.connectionsOf(toNumber);
    for (const conn of conns) conn.send(node);
    return conns.length;
  }

  /** A phone calls a number: every linked device of it receives the offer (rc14's handleCall reads it). */
  placeCall(phone: VirtualPhone, toNumber: string, isVideo: boolean): { callId: string; delivered: number } {
    if (!this.deps.directory.get(toNumber)) throw new Error(`${toNumber} is not on the sandbox network`);
    const callId = randomBytes(16).toString('hex').toUpperCase();
    const from = this.deps.addressing.userJid(phone);
    remember(this.calls, callId, { callId, from: phone.number, to: toNumber, isVideo, status: 'ringing', at: new Date().toISOString() });
    const conns = this.deps.connectionsOf(toNumber);
    for (const conn of conns) {
      conn.send({
        tag: 'call',
        attrs: { from, id: randomBytes(8).toString('hex').toUpperCase(), t: now() },
        content: [
          {
            tag: 'offer',
            attrs: {
              'call-id': callId,
              'call-creator': from,
              ...(from === phone.jid || phone.hideNumber ? {} : { caller_pn: phone.jid }),
            },
            content: [
              { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
              ...(isVideo ? [{ tag: 'video', attrs: { enc: 'vp8', dec: 'vp8' } }] : []),
            ],
          },
        ],
      });
    }
    return { callId, delivered: conns.length };
  }

  /** A companion's `call` stanza: a reject of a call ringing it; answered (Baileys waits for the answer). */
  callStanza(conn: Connection, node: BinaryNode): void {
    const reject = getBinaryNodeChild(node, 'reject');
    const call = reject ? this.calls.get(reject.attrs['call-id'] ?? '') : undefined;
    if (call && conn.phone?.number === call.to && call.status === 'ringing') {
      call.status = 'rejected';
      call.rejectedBy = `${conn.phone.number}:${conn.device?.deviceId ?? 0}`;
    }
    conn.send({ tag: 'ack', attrs: { id: node.attrs.id ?? '', class: 'call', from: node.attrs.to ?? 's.whatsapp.net' } });
  }

  call(callId: string): CallView | undefined {
    const call = this.calls.get(callId);
    return call ? { ...call } : undefined;
  }
}
