import type { VirtualPhone } from './directory.ts';

/**
 * How the sandbox names phones on the wire. `lid`, today's WhatsApp: 1:1 chats, groups, receipts and
 * notifications name a phone by its LID and add its phone number beside it, unless the phone hides it.
 * `pn`: the older network, where everything is addressed by phone number.
 */
export type AddressingMode = 'lid' | 'pn';

const withDevice = (user: string, server: string, deviceId: number): string =>
  deviceId ? `${user}:${deviceId}@${server}` : `${user}@${server}`;

export const lidJid = (phone: VirtualPhone, deviceId = 0): string => withDevice(phone.lid.split('@')[0] ?? '', 'lid', deviceId);

export const pnJid = (phone: VirtualPhone, deviceId = 0): string => withDevice(phone.number, 's.whatsapp.net', deviceId);

type Attrs = Record<string, string>;

/** The wire addressing of one sandbox network; every stanza that names a phone asks it how. */
export class Addressing {
  /**
   * `revealsLids`: whether the network tells a client a number's LID (usync's `lid` protocol, a
   * privacy token's `sender_lid`). Off only on a `pn` network, as before LIDs: Baileys rc14 then has
   * no mapping and keys its Signal sessions by phone number.
   */
  constructor(
    readonly mode: AddressingMode,
    readonly revealsLids = true,
  ) {
    if (mode === 'lid' && !revealsLids) throw new Error('a lid network names every phone by its LID; revealLids: false needs pn');
  }

  /** A hidden number cannot be named, so such a phone is LID-addressed in 1:1 chats even on a `pn` network. */
  private lidFor1to1(phone: VirtualPhone): boolean {
    return this.mode === 'lid' || phone.hideNumber;
  }

  /** A phone (or one of its devices) as the sender of a 1:1 message: `from`, and the number beside a LID. */
  sender(phone: VirtualPhone, deviceId = 0): Attrs {
    if (!this.lidFor1to1(phone)) return { from: pnJid(phone, deviceId) };
    return { from: lidJid(phone, deviceId), ...(phone.hideNumber ? {} : { sender_pn: phone.jid }) };
  }

  /** A companion's copy of a 1:1 message another device of its own account sent: the peer as `recipient`. */
  ownCopy(sender: VirtualPhone, deviceId: number, peer: VirtualPhone): Attrs {
    if (this.mode === 'pn') return { from: pnJid(sender, deviceId), recipient: peer.jid };
    return { from: lidJid(sender, deviceId), recipient: peer.lid, ...(peer.hideNumber ? {} : { peer_recipient_pn: peer.jid }) };
  }

  /** The sender of a privacy-token notification: as a 1:1 sender, and on a `pn` network its LID as `sender_lid` (where Baileys files the token) unless LIDs are not revealed. */
  tokenSender(phone: VirtualPhone): Attrs {
    if (this.lidFor1to1(phone)) return this.sender(phone);
    return { from: phone.jid, ...(this.revealsLids ? { sender_lid: phone.lid } : {}) };
  }

  /** A phone as the sender of a receipt or of a notification about itself (`from` only). */
  userJid(phone: VirtualPhone): string {
    return this.lidFor1to1(phone) ? phone.lid : phone.jid;
  }

  /** The sender of a group (or status) message. */
  groupSender(phone: VirtualPhone, deviceId: number): Attrs {
    if (this.mode === 'pn') return { participant: pnJid(phone, deviceId) };
    return { participant: lidJid(phone, deviceId), ...(phone.hideNumber ? {} : { participant_pn: phone.jid }), addressing_mode: 'lid' };
  }

  /** A group member as a `participant` child (metadata and w:gp2 changes). */
  member(phone: VirtualPhone): Attrs {
    if (this.mode === 'pn') return { jid: phone.jid };
    return { jid: phone.lid, ...(phone.hideNumber ? {} : { phone_number: phone.jid }) };
  }

  /** Someone named in a group's own attributes (creator, subject owner, acting participant): the name and its `<name>_pn`. */
  groupActor(phone: VirtualPhone, name: string): Attrs {
    if (this.mode === 'pn') return { [name]: phone.jid };
    return { [name]: phone.lid, ...(phone.hideNumber ? {} : { [`${name}_pn`]: phone.jid }) };
  }

  /** A group member as the `participant` of its receipts. */
  memberJid(phone: VirtualPhone): string {
    return this.mode === 'pn' ? phone.jid : phone.lid;
  }
}
