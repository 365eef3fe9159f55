import { randomBytes } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren, normalizeMessageContent, proto } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { MediaType } from 'baileys';
import type { Addressing } from './addressing.ts';
import type { Directory, InboxEntry, IssuedToken, MessageKeyView, VirtualPhone } from './directory.ts';
import type { Logger } from 'pino';
import type { GroupService } from './groups.ts';
import { sha256Hex } from './media.ts';
import { pollOf } from './polls.ts';
import type { MediaHost } from './media.ts';
import type { Pushback } from './pushback.ts';
import { bundleNode, takePreKey } from './prekeys.ts';
import type { Connection, SandboxServer } from './server.ts';
import { newTag } from './server.ts';
import { addressOf } from './signal.ts';
import type { PublishedBundle } from './signal.ts';

const now = () => String(Math.floor(Date.now() / 1000));
/**
 * The ack error of a message refused for the sender's rate: no public capture shows the code, so it is
 * the one WhatsApp's IQs use for `rate-overlimit` (see docs/sandbox.md, "Where we guessed").
 */
export const RATE_LIMITED = '429';

/** How many decrypt failures the router remembers for its control API. */
const REMEMBERED_FAILURES = 1_000;

/**
 * A message that did not decrypt: on a phone (`phone`, from the linked device `peer`: Bad MAC, a key used
 * already...; the phone then asks for it again) or on a linked device (`device`: the device `peer` sent a
 * retry receipt for what the phone `phone` sent it).
 */
export interface DecryptFailure {
  on: 'phone' | 'device';
  phone: string;
  peer: string;
  id: string;
  error: string;
  at: string;
}

/**
 * How many retry receipts a phone sends for one message it cannot decrypt, as Baileys' own
 * `maxMsgRetryCount` (5); the sender gives up earlier on its side.
 */
const MAX_RETRY_RECEIPTS = 5;
/** Messages a phone remembers having sent, to answer a retry receipt (the oldest are forgotten first). */
const REMEMBERED_SENDS = 20_000;

/** Inserts into a map used as a bounded, oldest-first memory. */
const remember = <K, V>(map: Map<K, V>, key: K, value: V, bound: number): void => {
  map.delete(key);
  map.set(key, value);
  if (map.size > bound) map.delete(map.keys().next().value as K);
};
/** Messages a device has not receipted yet, per device (the oldest are dropped first, as a server's offline queue bounds them). */
const UNRECEIPTED_PER_DEVICE = 5_000;

/** A phone's message a linked device has not receipted: the network holds it and delivers it again when the device logs in. */
interface Unreceipted {
  from: VirtualPhone;
  plaintext: Uint8Array;
  /** the stanza's time when the phone sent it: WhatsApp's server keeps it on every delivery */
  t: string;
}

/** When each linked device's delivery receipt for a message a phone sent arrived. */
export interface DeliveryView {
  id: string;
  to: string;
  /** device ids that receipted it, with when */
  receipted: Array<{ deviceId: number; at: string }>;
  /** linked devices the network still holds it for */
  waiting: number[];
}

export const newMessageId = (): string => `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;

const bytesOf = (node: BinaryNode | undefined): Uint8Array | undefined => (node?.content instanceof Uint8Array ? node.content : undefined);

/** The target of one `<to>` (or of the whole stanza): a phone and one of its devices. */
const splitJid = (directory: Directory, jid: string): { phone?: VirtualPhone; deviceId: number } => {
  const user = jid.split('@')[0] ?? '';
  return { phone: directory.find(jid), deviceId: Number(user.split(':')[1] ?? 0) || 0 };
};

/** What a phone's inbox shows for a decrypted message: its kind and a readable content. */
export const describeForInbox = (
  message: proto.IMessage,
): Pick<InboxEntry, 'kind' | 'content' | 'caption' | 'mimetype' | 'fileName' | 'poll'> => {
  const m = normalizeMessageContent(message) ?? message;
  if (m.conversation) return { kind: 'text', content: m.conversation };
  if (m.extendedTextMessage?.text) return { kind: 'text', content: m.extendedTextMessage.text };
  if (m.imageMessage)
    return {
      kind: 'image',
      content: m.imageMessage.caption ?? '',
      caption: m.imageMessage.caption ?? undefined,
      mimetype: m.imageMessage.mimetype ?? undefined,
    };
  if (m.videoMessage)
    return {
      kind: 'video',
      content: m.videoMessage.caption ?? '',
      caption: m.videoMessage.caption ?? undefined,
      mimetype: m.videoMessage.mimetype ?? undefined,
    };
  if (m.audioMessage) return { kind: m.audioMessage.ptt ? 'voice' : 'audio', content: '', mimetype: m.audioMessage.mimetype ?? undefined };
  const doc = m.documentMessage ?? m.documentWithCaptionMessage?.message?.documentMessage;
  if (doc)
    return {
      kind: 'document',
      content: doc.caption ?? doc.fileName ?? '',
      caption: doc.caption ?? undefined,
      mimetype: doc.mimetype ?? undefined,
      fileName: doc.fileName ?? undefined,
    };
  if (m.contactMessage) return { kind: 'contact', content: m.contactMessage.displayName ?? '' };
  if (m.contactsArrayMessage)
    return { kind: 'contact', content: m.contactsArrayMessage.contacts?.[0]?.displayName ?? m.contactsArrayMessage.displayName ?? '' };
  if (m.locationMessage) {
    const l = m.locationMessage;
    return { kind: 'location', content: [`${l.degreesLatitude},${l.degreesLongitude}`, l.name, l.address].filter(Boolean).join(' ') };
  }
  if (m.interactiveMessage) {
    const buttons = m.interactiveMessage.nativeFlowMessage?.buttons ?? [];
    return {
      kind: 'buttons',
      content: [
        m.interactiveMessage.body?.text ?? '',
        ...buttons.map((b) => `[${(JSON.parse(b.buttonParamsJson ?? '{}') as { display_text?: string }).display_text ?? ''}]`),
      ].join(' '),
    };
  }
  if (m.protocolMessage?.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) {
    return { kind: 'edit', content: describeForInbox(m.protocolMessage.editedMessage ?? {}).content };
  }
  if (m.protocolMessage?.type === proto.Message.ProtocolMessage.Type.REVOKE)
    return { kind: 'revoke', content: m.protocolMessage.key?.id ?? '' };
  if (m.reactionMessage) return { kind: 'reaction', content: m.reactionMessage.text ?? '' };
  const poll = pollOf(m);
  if (poll)
    return { kind: 'poll', content: poll.name, poll: { name: poll.name, options: poll.options, selectableCount: poll.selectableCount } };
  if (m.pollUpdateMessage) return { kind: 'poll_vote', content: m.pollUpdateMessage.pollCreationMessageKey?.id ?? '' };
  return { kind: Object.keys(m)[0] ?? 'unknown', content: '' };
};

const keyView = (key: proto.IMessageKey | null | undefined): MessageKeyView | undefined =>
  key?.id ? { id: key.id, remoteJid: key.remoteJid || null, fromMe: key.fromMe ?? false, participant: key.participant || null } : undefined;

/**
 * What a message points at, for a user checking their integration: the quote and mentions of its
 * contextInfo (whichever kind carries it), and the key a reaction, edit or delete names.
 */
export const pointersOf = (message: proto.IMessage): Pick<InboxEntry, 'quoted' | 'mentions' | 'target'> => {
  const m = normalizeMessageContent(message) ?? message;
  const target = keyView(m.reactionMessage?.key ?? m.protocolMessage?.key);
  if (target) return { target };
  let context: proto.IContextInfo | undefined;
  for (const part of Object.values(m) as unknown[]) {
    if (part && typeof part === 'object' && 'contextInfo' in part && part.contextInfo) {
      context = part.contextInfo as proto.IContextInfo;
      break;
    }
  }
  const mentions = context?.mentionedJid?.filter((jid) => jid.length > 0) ?? [];
  return {
    ...(context?.stanzaId ? { quoted: { id: context.stanzaId, participant: context.participant || null } } : {}),
    ...(mentions.length > 0 ? { mentions } : {}),
  };
};

/** Keeps what a phone received; a repeated id is counted, not shown twice. */
export const deliverToInbox = (phone: VirtualPhone, id: string, from: string, chat: string, message: proto.IMessage): InboxEntry | null => {
  const inner = normalizeMessageContent(message) ?? message;
  if (inner.senderKeyDistributionMessage && Object.keys(inner).length === 1) return null;
  const protocolType = inner.protocolMessage?.type;
  const shown =
    protocolType === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT || protocolType === proto.Message.ProtocolMessage.Type.REVOKE;
  if (inner.protocolMessage && !shown) return null;
  const key = `${chat}\u0000${id}`;
  const existing = phone.inboxIndex.get(key);
  if (existing) {
    existing.duplicates += 1;
    return existing;
  }
  const entry: InboxEntry = {
    id,
    from,
    chat,
    ...describeForInbox(message),
    ...pointersOf(message),
    raw: proto.Message.toObject(proto.Message.fromObject(message)),
    receivedAt: new Date().toISOString(),
    duplicates: 0,
  };
  if (entry.kind === 'edit') {
    const editedId = inner.protocolMessage?.key?.id;
    const original = phone.inboxIndex.get(`${chat}\u0000${editedId}`);
    if (original) original.content = entry.content;
  }
  if (entry.kind === 'revoke') {
    const original = phone.inboxIndex.get(`${chat}\u0000${entry.content}`);
    if (original) original.deletedAt = entry.receivedAt;
  }
  phone.inbox.push(entry);
  phone.inboxIndex.set(key, entry);
  return entry;
};

const MEDIA_KINDS: Array<[keyof proto.IMessage, MediaType]> = [
  ['imageMessage', 'image'],
  ['videoMessage', 'video'],
  ['audioMessage', 'audio'],
  ['documentMessage', 'document'],
  ['stickerMessage', 'sticker'],
];

/** The parts of the sandbox network (network.ts) that routing uses. */
export interface RouterParts {
  directory: Directory;
  addressing: Addressing;
  media: MediaHost;
  logger: Logger;
  server: SandboxServer;
  groups: GroupService;
  pushback: Pushback;
  /** a device's peer data request to its own phone (on-demand history) */
  peerRequest: (conn: Connection, id: string, message: proto.IMessage) => Promise<void>;
}

/** 1:1 traffic: key bundles, companion -> phone and companion -> companion messages, receipts. */
export class Router {
  /** Told when a phone's message, encrypted on the phone, enters the network on its way to a device. */
  readonly phoneMessageListeners = new Set<(entry: { id: string; from: string; to: string }) => void>();

  /**
   * What each phone sent, by `<number>\u0000<id>`: the plaintext and the number it went to, or the
   * group, status or broadcast list it went into and the numbers it reached there.
   */
  private readonly sentByPhones = new Map<string, { to: string; plaintext: Uint8Array; recipients?: Set<string> }>();
  /** Per linked device (`<number>:<deviceId>`), the phones' messages it has not receipted, by id. */
  private readonly unreceipted = new Map<string, Map<string, Unreceipted>>();
  /** Delivery receipts from linked devices for phones' messages, by `<number>\u0000<id>` of the sending phone. */
  private readonly receiptedBy = new Map<string, Array<{ deviceId: number; at: string }>>();
  /**
   * Per linked account's number, how long its devices' delivery receipts take to reach the network (a
   * slow uplink, SandboxControl.setReceiptLag): one still travelling when its connection closes never arrives.
   */
  readonly receiptLagMs = new Map<string, number>();
  /** Retry receipts a phone has sent, by `<number>\u0000<id>`. */
  private readonly retriesAsked = new Map<string, number>();
  /** Retry receipts a phone has answered, by `<number>\u0000<id>`. */
  private readonly retriesAnswered = new Map<string, number>();
  /** Messages that did not decrypt, the last REMEMBERED_FAILURES, oldest first (see DecryptFailure). */
  private readonly failures: DecryptFailure[] = [];
  /** Messages phones sent into a group, a status or a broadcast list, by id: their sender, for the devices' receipts. */
  private readonly chatSends = new Map<string, VirtualPhone>();

  constructor(private readonly network: RouterParts) {}

  /** See DecryptFailure. */
  decryptFailures(): DecryptFailure[] {
    return [...this.failures];
  }

  private failed(failure: Omit<DecryptFailure, 'at'>): void {
    this.failures.push({ ...failure, at: new Date().toISOString() });
    if (this.failures.length > REMEMBERED_FAILURES) this.failures.shift();
  }

  get directory(): Directory {
    return this.network.directory;
  }

  private get addressing(): Addressing {
    return this.network.addressing;
  }

  /** encrypt/get <key>: the bundle of each device asked for. */
  keyBundles(iq: BinaryNode): BinaryNode[] {
    const users = getBinaryNodeChildren(getBinaryNodeChild(iq, 'key'), 'user').map((user) => {
      const jid = user.attrs.jid ?? '';
      const { phone, deviceId } = splitJid(this.directory, jid);
      if (!phone) return { tag: 'user', attrs: { jid }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
      if (deviceId === 0) {
        const b = phone.signal.bundle();
        return bundleNode(jid, b, b.preKey);
      }
      const device = phone.devices.get(deviceId);
      if (!device) return { tag: 'user', attrs: { jid }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
      return bundleNode(jid, device, takePreKey(device));
    });
    return [{ tag: 'list', attrs: {}, content: users }];
  }

  /** Channel posts as the sandbox received them, by channel JID. */
  readonly newsletters = new Map<string, Array<{ id: string; from: string; message: proto.IMessage }>>();
  /** Phones a sender's statuses reach once they hold its status sender key. */
  private readonly statusAudience = new Map<string, Set<VirtualPhone>>();

  /** Fetches and decrypts the file a media message points at, recording its size and hash in the inbox. */
  async openMedia(entry: InboxEntry | null, message: proto.IMessage): Promise<void> {
    if (!entry) return;
    const m = normalizeMessageContent(message) ?? message;
    const inner = m.documentWithCaptionMessage?.message ?? m;
    for (const [field, type] of MEDIA_KINDS) {
      const media = inner[field] as { directPath?: string | null; url?: string | null; mediaKey?: Uint8Array | null } | null | undefined;
      if (!media?.mediaKey || !(media.directPath || media.url)) continue;
      try {
        const data = await this.network.media.open(media.directPath || media.url || '', media.mediaKey, type);
        entry.size = data.length;
        entry.sha256 = sha256Hex(data);
      } catch (err) {
        this.network.logger.warn({ err, id: entry.id }, 'a virtual phone could not download a media file');
      }
    }
  }

  /** A companion sent a message: decrypt what is for phones, forward what is for companions. */
  async fromCompanion(conn: Connection, node: BinaryNode): Promise<void> {
    const sender = conn.phone;
    const senderDevice = conn.device;
    if (!sender || !senderDevice) return;
    const to = node.attrs.to ?? '';
    const id = node.attrs.id ?? newMessageId();
    const addressee = this.directory.find(to);
    // Messages between the account's own devices (peer data, own copies) are not sends to anyone.
    if (addressee !== sender && !this.network.pushback.admitMessage(sender.number)) {
      conn.send({ tag: 'ack', attrs: { id, class: 'message', from: to, t: now(), error: RATE_LIMITED } });
      return;
    }
    if (to.endsWith('@newsletter')) return this.toNewsletter(conn, node);
    if (to.endsWith('@g.us') || to === 'status@broadcast') return this.toGroup(conn, node);
    const senderJid = `${sender.number}:${senderDevice.deviceId}@s.whatsapp.net`;
    if (
      addressee &&
      addressee !== sender &&
      (this.network.pushback.refusesNewChat(sender.number, addressee.number) || this.refusesForToken(addressee, sender, id, node))
    ) {
      conn.send({ tag: 'ack', attrs: { id, class: 'message', from: to, t: now(), error: '463' } });
      return;
    }
    const targets: Array<{ jid: string; enc: BinaryNode }> = [];
    for (const toNode of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
      const enc = getBinaryNodeChild(toNode, 'enc');
      if (enc && toNode.attrs.jid) targets.push({ jid: toNode.attrs.jid, enc });
    }
    const direct = getBinaryNodeChild(node, 'enc');
    if (direct) targets.push({ jid: to, enc: direct });

    const chatOf = (recipient: VirtualPhone) => (recipient === sender ? this.chatJid(to) : sender.jid);
    const receipts: BinaryNode[] = [];
    let hadButtons = false;
    for (const target of targets) {
      const { phone, deviceId } = splitJid(this.directory, target.jid);
      if (!phone) continue;
      const type = target.enc.attrs.type ?? 'msg';
      const ciphertext = bytesOf(target.enc);
      if (!ciphertext) continue;
      if (deviceId === 0) {
        try {
          const plaintext = await phone.signal.decrypt(addressOf(senderJid), type, ciphertext);
          const message = proto.Message.decode(plaintext);
          const inner = normalizeMessageContent(message) ?? message;
          if (inner.interactiveMessage || inner.buttonsMessage) hadButtons = true;
          if (hadButtons && conn.refuseButtons) continue;
          // A peer data request to the account's own phone (on-demand history): the phone answers it.
          if (phone === sender && node.attrs.category === 'peer') await this.network.peerRequest(conn, id, message);
          // A copy for the sender's own phone arrives wrapped as a device-sent message; it is not an incoming one.
          if (phone !== sender) {
            const entry = deliverToInbox(phone, id, sender.jid, chatOf(phone), message);
            // By LID on a lid network (or for a hidden number); on a pn one, in the address space the sender used.
            const receiptAs = { from: to.endsWith('@lid') ? phone.lid : this.addressing.userJid(phone) };
            if (entry) entry.receiptAs = receiptAs;
            receipts.push(deliveryReceipt(id, receiptAs));
            await this.openMedia(entry, message);
          }
        } catch (err) {
          this.network.logger.warn({ err, to: target.jid, from: senderJid }, 'a virtual phone could not decrypt a message');
          this.failed({ on: 'phone', phone: phone.number, peer: senderJid, id, error: err instanceof Error ? err.message : String(err) });
          this.askForRetry(conn, phone, id, node, phone === sender ? this.recipientJid(to) : undefined);
        }
        continue;
      }
      for (const peer of this.network.server.connectionsOf(phone.number).filter((c) => c.device?.deviceId === deviceId && c !== conn)) {
        // A copy for another device of the sender's own account comes from the sending device, with the chat as `recipient`.
        const addressed =
          phone === sender && addressee
            ? this.addressing.ownCopy(sender, senderDevice.deviceId, addressee)
            : this.addressing.sender(sender, senderDevice.deviceId);
        peer.send({
          tag: 'message',
          attrs: { ...addressed, id, t: now(), type: node.attrs.type ?? 'text', notify: sender.name },
          content: [target.enc],
        });
      }
    }
    if (hadButtons && conn.refuseButtons) {
      conn.send({ tag: 'ack', attrs: { id: node.attrs.id ?? '', class: 'message', from: to, t: now(), error: '479' } });
      return;
    }
    if (addressee) this.network.pushback.noteChat(sender.number, addressee.number);
    this.ack(conn, node, to, receipts);
  }

  private toNewsletter(conn: Connection, node: BinaryNode): void {
    const to = node.attrs.to ?? '';
    const plaintext = bytesOf(getBinaryNodeChild(node, 'plaintext'));
    if (plaintext) {
      const posts = this.newsletters.get(to) ?? [];
      posts.push({ id: node.attrs.id ?? newMessageId(), from: conn.phone?.jid ?? '', message: proto.Message.decode(plaintext) });
      this.newsletters.set(to, posts);
    }
    this.ack(conn, node, to, []);
  }

  /** Groups and statuses: sender keys travel pairwise, then one skmsg every member decrypts. */
  private async toGroup(conn: Connection, node: BinaryNode): Promise<void> {
    const sender = conn.phone as VirtualPhone;
    const senderJid = `${sender.number}:${conn.device?.deviceId ?? 0}@s.whatsapp.net`;
    const groupId = node.attrs.to ?? '';
    const id = node.attrs.id ?? newMessageId();
    const isStatus = groupId === 'status@broadcast';
    const pairwise = new Map<string, BinaryNode>();
    const reached = new Set<VirtualPhone>();
    for (const toNode of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
      const enc = getBinaryNodeChild(toNode, 'enc');
      const jid = toNode.attrs.jid ?? '';
      const { phone, deviceId } = splitJid(this.directory, jid);
      const ciphertext = bytesOf(enc);
      if (!phone || !enc || !ciphertext) continue;
      if (deviceId !== 0) {
        pairwise.set(`${phone.number}:${deviceId}`, enc);
        continue;
      }
      try {
        const message = proto.Message.decode(await phone.signal.decrypt(addressOf(senderJid), enc.attrs.type ?? 'pkmsg', ciphertext));
        const skdm = message.senderKeyDistributionMessage;
        if (skdm?.axolotlSenderKeyDistributionMessage) {
          await phone.signal.processSenderKey(groupId, addressOf(senderJid), skdm.axolotlSenderKeyDistributionMessage);
          if (phone !== sender) reached.add(phone);
        }
      } catch (err) {
        this.network.logger.warn({ err, jid, groupId }, 'a virtual phone could not read a sender key');
      }
    }
    const recipients = isStatus
      ? new Set([...(this.statusAudience.get(sender.number) ?? []), ...reached])
      : new Set(this.network.groups.members(groupId).filter((p) => p !== sender));
    if (isStatus) this.statusAudience.set(sender.number, recipients);
    const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg');
    const ciphertext = bytesOf(skmsg);
    const receipts: BinaryNode[] = [];
    if (skmsg && ciphertext) {
      for (const phone of recipients) {
        try {
          const message = proto.Message.decode(await phone.signal.decryptGroup(groupId, addressOf(senderJid), ciphertext));
          const entry = deliverToInbox(phone, id, sender.jid, groupId, message);
          // Each member answers for itself: the group as `from`, the member as `participant`.
          const receiptAs = { from: groupId, participant: this.addressing.memberJid(phone) };
          if (entry) entry.receiptAs = receiptAs;
          receipts.push(deliveryReceipt(id, receiptAs));
          await this.openMedia(entry, message);
        } catch (err) {
          this.network.logger.warn({ err, phone: phone.number, groupId }, 'a virtual phone could not decrypt a group message');
        }
      }
      // Companions of members (and the sender's other companions) get the same stanza, re-addressed.
      for (const phone of [...recipients, sender]) {
        for (const peer of this.network.server.connectionsOf(phone.number).filter((c) => c !== conn)) {
          const key = `${phone.number}:${peer.device?.deviceId ?? 0}`;
          const own = pairwise.get(key);
          peer.send({
            tag: 'message',
            attrs: {
              from: groupId,
              ...this.addressing.groupSender(sender, conn.device?.deviceId ?? 0),
              id,
              t: now(),
              type: node.attrs.type ?? 'text',
              notify: sender.name,
            },
            content: [...(own ? [own] : []), skmsg],
          });
        }
      }
    }
    this.ack(conn, node, groupId, receipts);
  }

  /**
   * A phone that cannot decrypt a message asks its sender to send it again, as WhatsApp's clients do:
   * a `receipt type=retry` with the count and the phone's registration id. The sender (Baileys'
   * `sendMessagesAgain`) then starts a new session from a fresh key bundle and sends the same id again.
   */
  private askForRetry(conn: Connection, phone: VirtualPhone, id: string, node: BinaryNode, recipient?: string): void {
    const key = `${phone.number}\u0000${id}`;
    const count = (this.retriesAsked.get(key) ?? 0) + 1;
    if (count > MAX_RETRY_RECEIPTS) {
      this.network.logger.warn({ phone: phone.number, id }, 'a virtual phone gave up on a message it could not decrypt');
      return;
    }
    remember(this.retriesAsked, key, count, REMEMBERED_SENDS);
    const registration = Buffer.alloc(4);
    registration.writeUInt32BE(phone.signal.registrationId);
    conn.send({
      tag: 'receipt',
      // The sender's own phone names the chat, as WhatsApp does for a copy of one's own message.
      attrs: { id, type: 'retry', from: this.addressing.userJid(phone), t: now(), ...(recipient ? { recipient } : {}) },
      content: [
        { tag: 'retry', attrs: { count: String(count), id, t: node.attrs.t ?? now(), v: '1', error: '0' } },
        { tag: 'registration', attrs: {}, content: registration },
      ],
    });
  }

  /**
   * A companion could not decrypt what a phone sent and asks for it again: the phone starts a new
   * session with that device (from the keys in the receipt, else from the device's uploaded bundle, as
   * a sender re-fetches prekeys) and sends the same message under the same id.
   */
  async retryToCompanion(conn: Connection, node: BinaryNode): Promise<void> {
    // For a message in a group, a status or a broadcast list, rc14's receipt names the chat in `to` and the sender as `participant`.
    const to = node.attrs.to ?? '';
    const chat = to.endsWith('@g.us') || to.endsWith('@broadcast') ? to : undefined;
    const phone = this.directory.find(chat ? (node.attrs.participant ?? '') : to);
    const device = conn.device;
    const id = node.attrs.id ?? '';
    if (phone && conn.phone && device) {
      this.failed({
        on: 'device',
        phone: phone.number,
        peer: `${conn.phone.number}:${device.deviceId}@s.whatsapp.net`,
        id,
        error: 'retry receipt',
      });
    }
    const sent = phone ? this.sentByPhones.get(`${phone.number}\u0000${id}`) : undefined;
    const sentHere = chat ? sent?.to === chat && conn.phone && sent.recipients?.has(conn.phone.number) : sent?.to === conn.phone?.number;
    if (!phone || !device || !conn.phone || !sent || !sentHere) {
      this.network.logger.warn({ to: node.attrs.to, id }, 'a retry receipt for a message the phone does not remember');
      return;
    }
    const key = `${phone.number}\u0000${id}\u0000${device.deviceId}`;
    const count = (this.retriesAnswered.get(key) ?? 0) + 1;
    if (count > MAX_RETRY_RECEIPTS) return;
    remember(this.retriesAnswered, key, count, REMEMBERED_SENDS);
    const companion = addressOf(`${conn.phone.number}:${device.deviceId}@s.whatsapp.net`);
    phone.signal.forgetSession(companion);
    const keys = getBinaryNodeChild(node, 'keys');
    const offered = keys ? bundleFromReceipt(keys) : undefined;
    const { type, body } = await phone.signal.encrypt(companion, sent.plaintext, () => ({
      registrationId: device.registrationId,
      identityPublic: device.identityPublic,
      signedPreKey: device.signedPreKey,
      preKey: takePreKey(device),
      ...offered,
    }));
    conn.send({
      tag: 'message',
      attrs: {
        ...(chat ? { from: chat, ...this.addressing.groupSender(phone, 0) } : this.addressing.sender(phone)),
        id,
        t: now(),
        type: 'text',
        notify: phone.name,
      },
      content: [{ tag: 'enc', attrs: { v: '2', type, count: String(count) }, content: body }],
    });
  }

  /**
   * Server ack, then the delivery receipt of each recipient phone that decrypted the message, unless a
   * fault delays or withholds them.
   */
  private ack(conn: Connection, node: BinaryNode, to: string, receipts: BinaryNode[]): void {
    const send = () => {
      conn.send({ tag: 'ack', attrs: { id: node.attrs.id ?? '', class: 'message', from: to, t: now() } });
      for (const receipt of receipts) conn.send(receipt);
    };
    if (conn.withholdAcks) return;
    if (conn.ackDelayMs > 0) setTimeout(send, conn.ackDelayMs);
    else send();
  }

  /**
   * A phone reads (or plays) messages it received: one `receipt type=read|played` per sender and chat,
   * the first id in `id` and the others as `<list><item id>`, as WhatsApp batches them; it goes to every
   * linked device of the sender. Sent again each time it is asked for, so a repeated receipt can be tested.
   */
  markAs(phone: VirtualPhone, entries: InboxEntry[], type: 'read' | 'played'): number {
    const bySender = new Map<string, { entry: InboxEntry; ids: string[] }>();
    for (const entry of entries) {
      const key = `${entry.from}\u0000${entry.chat}`;
      const group = bySender.get(key) ?? { entry, ids: [] };
      group.ids.push(entry.id);
      bySender.set(key, group);
      const at = new Date().toISOString();
      if (type === 'played') entry.playedAt = at;
      entry.readAt = at;
    }
    let sent = 0;
    for (const { entry, ids } of bySender.values()) {
      const [first, ...rest] = ids;
      const receiptAs = entry.receiptAs ?? { from: this.addressing.userJid(phone) };
      const receipt: BinaryNode = {
        tag: 'receipt',
        attrs: { id: first ?? '', type, t: now(), ...receiptAs },
        ...(rest.length > 0 ? { content: [{ tag: 'list', attrs: {}, content: rest.map((id) => ({ tag: 'item', attrs: { id } })) }] } : {}),
      };
      for (const conn of this.network.server.connectionsOf(entry.from.split('@')[0] ?? '')) {
        conn.send(receipt);
        sent += 1;
      }
    }
    return sent;
  }

  /**
   * The account's own phone reads a chat (a person's number or a group's JID) in the app: each linked
   * device gets a `read-self` receipt for the messages phones sent the account there (messages-recv.js
   * handleReceipt reads it as a READ status of those messages, or in a group as a receipt naming the
   * account). Answers the ids marked and the receipts sent.
   */
  readSelf(account: VirtualPhone, chat: string): { ids: string[]; receipts: number } {
    const group = chat.endsWith('@g.us');
    const peer = group ? undefined : this.directory.find(chat);
    if (!group && !peer) throw new Error(`${chat} is not on the sandbox network`);
    const ids: string[] = [];
    for (const [key, sent] of this.sentByPhones) {
      const [sender, id] = key.split('\u0000');
      if (!id) continue;
      if (group ? sent.to === chat && sent.recipients?.has(account.number) : sender === peer?.number && sent.to === account.number)
        ids.push(id);
    }
    const [first, ...rest] = ids;
    if (!first) return { ids, receipts: 0 };
    const addressed: Record<string, string> = group
      ? { from: chat, participant: this.addressing.memberJid(account) }
      : { from: this.addressing.userJid(account), recipient: this.addressing.userJid(peer as VirtualPhone) };
    const receipt: BinaryNode = {
      tag: 'receipt',
      attrs: { ...addressed, id: first, type: 'read-self', t: now() },
      ...(rest.length > 0 ? { content: [{ tag: 'list', attrs: {}, content: rest.map((id) => ({ tag: 'item', attrs: { id } })) }] } : {}),
    };
    let receipts = 0;
    for (const conn of this.network.server.connectionsOf(account.number)) {
      conn.send(receipt);
      receipts += 1;
    }
    return { ids, receipts };
  }

  private chatJid(to: string): string {
    const phone = this.directory.find(to);
    return phone && !to.endsWith('@g.us') ? phone.jid : to;
  }

  /** The chat a phone's retry receipt for its own account's message names as `recipient`. */
  private recipientJid(to: string): string {
    const phone = this.directory.find(to);
    return phone && !to.endsWith('@g.us') ? this.addressing.userJid(phone) : to;
  }

  /**
   * A phone that requires a privacy token refuses a linked account's 1:1 message unless it shows the
   * token the phone issued to that account; a message the phone asked to be sent again is let through,
   * as Baileys sends those without a token.
   */
  private refusesForToken(phone: VirtualPhone, sender: VirtualPhone, id: string, node: BinaryNode): boolean {
    if (!phone.requireToken || this.retriesAsked.has(`${phone.number}\u0000${id}`)) return false;
    const issued = phone.tokensIssued.get(sender.number);
    const shown = bytesOf(getBinaryNodeChild(node, 'tctoken'));
    return !issued || !shown || Buffer.compare(Buffer.from(issued.token), Buffer.from(shown)) !== 0;
  }

  /** The token a phone hands an account the first time it writes to it (one per account, kept). */
  private tokenFor(phone: VirtualPhone, account: VirtualPhone): IssuedToken {
    let issued = phone.tokensIssued.get(account.number);
    if (!issued) {
      issued = { token: Buffer.concat([Buffer.from([1, 1]), randomBytes(30)]), t: Math.floor(Date.now() / 1000), toldDevices: new Set() };
      phone.tokensIssued.set(account.number, issued);
    }
    return issued;
  }

  /** Tells a linked device of `account` the token `phone` issued it, once per device. */
  private tellToken(conn: Connection, phone: VirtualPhone, account: VirtualPhone, issued: IssuedToken): void {
    const deviceId = conn.device?.deviceId;
    if (deviceId === undefined || issued.toldDevices.has(deviceId)) return;
    issued.toldDevices.add(deviceId);
    conn.send({
      tag: 'notification',
      attrs: { ...this.addressing.tokenSender(phone), type: 'privacy_token', id: newTag(), t: now() },
      content: [
        {
          tag: 'tokens',
          attrs: {},
          content: [
            {
              tag: 'token',
              attrs: { jid: this.addressing.userJid(account), t: String(issued.t), type: 'trusted_contact' },
              content: issued.token,
            },
          ],
        },
      ],
    });
  }

  /** A phone sends to a number: every linked companion of that number receives it, encrypted by the phone. */
  async fromPhone(phone: VirtualPhone, toNumber: string, message: proto.IMessage): Promise<{ id: string; delivered: number }> {
    const recipient = this.directory.get(toNumber);
    if (!recipient) throw new Error(`${toNumber} is not on the sandbox network`);
    const id = newMessageId();
    this.network.pushback.noteChat(phone.number, recipient.number);
    const plaintext = proto.Message.encode(message).finish();
    remember(this.sentByPhones, `${phone.number}\u0000${id}`, { to: recipient.number, plaintext }, REMEMBERED_SENDS);
    remember(this.receiptedBy, `${phone.number}\u0000${id}`, [], REMEMBERED_SENDS);
    let delivered = 0;
    const token = phone === recipient ? undefined : this.tokenFor(phone, recipient);
    const spoiled = phone.signal.undecryptable > 0;
    if (spoiled) phone.signal.undecryptable -= 1;
    for (const device of recipient.devices.values()) {
      if (device.loggedOut) continue;
      const pending = this.pendingFor(recipient.number, device.deviceId);
      const t = now();
      remember(pending, id, { from: phone, plaintext, t }, UNRECEIPTED_PER_DEVICE);
      for (const conn of this.network.server.connectionsOf(recipient.number).filter((c) => c.device === device)) {
        if (token) this.tellToken(conn, phone, recipient, token);
        if (spoiled) phone.signal.spoilSession(addressOf(`${recipient.number}:${device.deviceId}@s.whatsapp.net`));
        for (const listener of this.phoneMessageListeners) listener({ id, from: phone.number, to: recipient.number });
        await this.sendToDevice(conn, phone, id, plaintext, t, false);
        delivered += 1;
      }
    }
    return { id, delivered };
  }

  /**
   * A phone writes into a group, its status (`status@broadcast`) or a broadcast list (`<id>@broadcast`):
   * each recipient's linked devices get the message with the chat as `from` and the phone as
   * `participant`. It is encrypted pairwise for each device, the form WhatsApp resends a group message
   * in and that Baileys decrypts in any chat, where WhatsApp sends a group's or a status's first copy
   * under the sender key (see docs/sandbox.md, "Where we guessed"). Sent again on a device's retry
   * receipt; not held for devices that are away.
   */
  async fromPhoneToChat(
    phone: VirtualPhone,
    chat: string,
    recipients: VirtualPhone[],
    message: proto.IMessage,
  ): Promise<{ id: string; delivered: number }> {
    const id = newMessageId();
    const plaintext = proto.Message.encode(message).finish();
    const reached = new Set(recipients.filter((r) => r !== phone).map((r) => r.number));
    remember(this.sentByPhones, `${phone.number}\u0000${id}`, { to: chat, plaintext, recipients: reached }, REMEMBERED_SENDS);
    remember(this.receiptedBy, `${phone.number}\u0000${id}`, [], REMEMBERED_SENDS);
    remember(this.chatSends, id, phone, REMEMBERED_SENDS);
    const spoiled = phone.signal.undecryptable > 0;
    if (spoiled) phone.signal.undecryptable -= 1;
    let delivered = 0;
    for (const recipient of recipients) {
      if (recipient === phone) continue;
      for (const conn of this.network.server.connectionsOf(recipient.number)) {
        const device = conn.device;
        if (!device || device.loggedOut) continue;
        if (spoiled) phone.signal.spoilSession(addressOf(`${recipient.number}:${device.deviceId}@s.whatsapp.net`));
        const { type, body } = await phone.signal.encrypt(
          addressOf(`${recipient.number}:${device.deviceId}@s.whatsapp.net`),
          plaintext,
          () => ({
            registrationId: device.registrationId,
            identityPublic: device.identityPublic,
            signedPreKey: device.signedPreKey,
            preKey: takePreKey(device),
          }),
        );
        conn.send({
          tag: 'message',
          attrs: { from: chat, ...this.addressing.groupSender(phone, 0), id, t: now(), type: 'text', notify: phone.name },
          content: [{ tag: 'enc', attrs: { v: '2', type }, content: body }],
        });
        delivered += 1;
      }
    }
    return { id, delivered };
  }

  /** A channel's post reaches its followers' linked devices as WhatsApp sends it: unencrypted (`<plaintext>`). */
  channelPost(channel: string, followers: VirtualPhone[], message: proto.IMessage): { id: string; delivered: number } {
    const id = newMessageId();
    const serverId = String(Math.floor(Math.random() * 1_000_000));
    let delivered = 0;
    for (const follower of followers) {
      for (const conn of this.network.server.connectionsOf(follower.number)) {
        conn.send({
          tag: 'message',
          attrs: { from: channel, id, server_id: serverId, t: now(), type: 'text' },
          content: [{ tag: 'plaintext', attrs: {}, content: proto.Message.encode(message).finish() }],
        });
        delivered += 1;
      }
    }
    return { id, delivered };
  }

  /**
   * A phone's protocol message to one of its own linked devices (a history sync notification): from the
   * phone's own JID with `category="peer"`, which Baileys receipts as `peer_msg` and reads as fromMe.
   */
  async toOwnDevice(conn: Connection, message: proto.IMessage): Promise<string> {
    const phone = conn.phone;
    const device = conn.device;
    if (!phone || !device) throw new Error('the connection is not a logged-in device');
    const id = newMessageId();
    const plaintext = proto.Message.encode(message).finish();
    const { type, body } = await phone.signal.encrypt(addressOf(`${phone.number}:${device.deviceId}@s.whatsapp.net`), plaintext, () => ({
      registrationId: device.registrationId,
      identityPublic: device.identityPublic,
      signedPreKey: device.signedPreKey,
      preKey: takePreKey(device),
    }));
    conn.send({
      tag: 'message',
      attrs: { ...this.addressing.sender(phone), id, t: now(), type: 'text', category: 'peer' },
      content: [{ tag: 'enc', attrs: { v: '2', type }, content: body }],
    });
    return id;
  }

  /**
   * A phone's message to one linked device, encrypted by the phone now, stamped with the time the phone
   * sent it; `offline` marks a delivery from the queue.
   */
  private async sendToDevice(
    conn: Connection,
    phone: VirtualPhone,
    id: string,
    plaintext: Uint8Array,
    t: string,
    offline: boolean,
  ): Promise<void> {
    const device = conn.device;
    const number = conn.phone?.number;
    if (!device || !number) return;
    const { type, body } = await phone.signal.encrypt(addressOf(`${number}:${device.deviceId}@s.whatsapp.net`), plaintext, () => ({
      registrationId: device.registrationId,
      identityPublic: device.identityPublic,
      signedPreKey: device.signedPreKey,
      preKey: takePreKey(device),
    }));
    conn.send({
      tag: 'message',
      attrs: { ...this.addressing.sender(phone), id, t, type: 'text', notify: phone.name, ...(offline ? { offline: '1' } : {}) },
      content: [{ tag: 'enc', attrs: { v: '2', type }, content: body }],
    });
  }

  private pendingFor(number: string, deviceId: number): Map<string, Unreceipted> {
    const key = `${number}:${deviceId}`;
    let pending = this.unreceipted.get(key);
    if (!pending) {
      pending = new Map();
      this.unreceipted.set(key, pending);
    }
    return pending;
  }

  /**
   * A linked device's delivery receipt (no type, or `inactive`) for phones' messages: the network stops
   * holding them for that device, and the sending phone notes when it came.
   */
  deliveryReceipt(conn: Connection, node: BinaryNode): void {
    const number = conn.phone?.number;
    const deviceId = conn.device?.deviceId;
    if (!number || deviceId === undefined) return;
    if (node.attrs.type !== undefined && node.attrs.type !== 'inactive') return;
    const lag = this.receiptLagMs.get(number) ?? 0;
    if (lag > 0) {
      setTimeout(() => {
        if (!conn.closed && conn.ws.readyState === conn.ws.OPEN) this.receiptArrived(number, deviceId, node);
      }, lag).unref();
      return;
    }
    this.receiptArrived(number, deviceId, node);
  }

  private receiptArrived(number: string, deviceId: number, node: BinaryNode): void {
    const ids = [node.attrs.id, ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((item) => item.attrs.id)];
    const pending = this.pendingFor(number, deviceId);
    for (const id of ids) {
      const intoChat = id ? this.chatSends.get(id) : undefined;
      if (id && intoChat) this.receiptedBy.get(`${intoChat.number}\u0000${id}`)?.push({ deviceId, at: new Date().toISOString() });
      const held = id ? pending.get(id) : undefined;
      if (!id || !held) continue;
      pending.delete(id);
      this.receiptedBy.get(`${held.from.number}\u0000${id}`)?.push({ deviceId, at: new Date().toISOString() });
    }
  }

  /**
   * A linked device logged in: the network delivers again, oldest first and marked offline, what the
   * device has not receipted (WhatsApp keeps a message until the device's receipt). The phone encrypts
   * it anew; WhatsApp's server would resend the stored ciphertext, which a device whose ratchet already
   * moved on answers with a retry receipt, and the phone then encrypts it anew all the same.
   */
  async redeliver(conn: Connection): Promise<number> {
    const number = conn.phone?.number;
    const deviceId = conn.device?.deviceId;
    if (!number || deviceId === undefined || !conn.phone) return 0;
    // Tokens the device missed while away come first, as the network queues notifications too.
    for (const phone of this.directory.all()) {
      const issued = phone.tokensIssued.get(number);
      if (issued) this.tellToken(conn, phone, conn.phone, issued);
    }
    const pending = [...this.pendingFor(number, deviceId).entries()];
    for (const [id, held] of pending) await this.sendToDevice(conn, held.from, id, held.plaintext, held.t, true);
    return pending.length;
  }

  /** Which linked devices have receipted a message this phone sent, and which the network still holds it for. */
  delivery(phone: VirtualPhone, id: string): DeliveryView | undefined {
    const receipted = this.receiptedBy.get(`${phone.number}\u0000${id}`);
    const sent = this.sentByPhones.get(`${phone.number}\u0000${id}`);
    if (!receipted || !sent) return undefined;
    const waiting: number[] = [];
    for (const [key, pending] of this.unreceipted) {
      const [owner, device] = key.split(':');
      if (owner === sent.to && pending.has(id)) waiting.push(Number(device));
    }
    return { id, to: sent.to, receipted: [...receipted], waiting };
  }
}

/** A recipient phone's delivery receipt: no type, its own address in `from` (and `participant` in a group). */
const deliveryReceipt = (id: string, as: { from: string; participant?: string }): BinaryNode => ({
  tag: 'receipt',
  attrs: { id, t: now(), ...as },
});

/** The key bundle a retry receipt may carry (`<keys>`: identity, one-time and signed prekeys). */
const bundleFromReceipt = (keys: BinaryNode): Partial<PublishedBundle> | undefined => {
  const identity = bytesOf(getBinaryNodeChild(keys, 'identity'));
  const skey = getBinaryNodeChild(keys, 'skey');
  const skeyValue = bytesOf(getBinaryNodeChild(skey, 'value'));
  const skeySignature = bytesOf(getBinaryNodeChild(skey, 'signature'));
  if (!identity || !skeyValue || !skeySignature) return undefined;
  const key = getBinaryNodeChild(keys, 'key');
  const keyValue = bytesOf(getBinaryNodeChild(key, 'value'));
  const number = (node: BinaryNode | undefined) => [...(bytesOf(node) ?? [])].reduce((n, b) => n * 256 + b, 0);
  return {
    identityPublic: identity,
    signedPreKey: { keyId: number(getBinaryNodeChild(skey, 'id')), publicKey: skeyValue, signature: skeySignature },
    ...(keyValue ? { preKey: { id: number(getBinaryNodeChild(key, 'id')), publicKey: keyValue } } : {}),
  };
};
