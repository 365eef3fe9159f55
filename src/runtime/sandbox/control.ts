import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { getMediaKeys, proto } from 'baileys';
import type { InboxEntry, VirtualPhone } from './directory.ts';
import type { AccountPresence, CallView, PhonePresence, ReadMark, TypingSeen } from './chats.ts';
import type { PhoneChatAction } from './app-state.ts';
import type { GroupView } from './groups.ts';
import type { HistoryInput, SentChunk } from './history.ts';
import type { PictureView } from './pictures.ts';
import type { BanOptions, PushbackView, RateLimit } from './pushback.ts';
import { describeForInbox } from './routing.ts';
import type { DecryptFailure, DeliveryView } from './routing.ts';
import type { SandboxNetwork } from './network.ts';
import { encryptPollVote, pollOf } from './polls.ts';
import type { TraceEntry } from './trace.ts';

export interface PhoneView {
  number: string;
  name: string;
  jid: string;
  lid: string;
  devices: number[];
  /** the phone hides its number: it writes from its LID alone, and groups show no phone number for it */
  hideNumber: boolean;
  /** 1:1 messages from linked accounts without this phone's privacy token are refused (ack 463) */
  requireToken: boolean;
  /** the numbers this phone handed a privacy token to (by writing to them) */
  tokensIssuedTo: string[];
  /** how the network pushes back on this number's linked devices: rate, restriction, ban and what it refused */
  pushback: PushbackView;
}

export type MediaKind = 'image' | 'video' | 'audio' | 'document';

const PROTOCOL = proto.Message.ProtocolMessage.Type;

/** What tests and users do with the sandbox: the same operations as its HTTP control API. */
export class SandboxControl {
  constructor(private readonly network: SandboxNetwork) {}

  addPhone(number: string, name?: string): PhoneView {
    return this.view(this.network.directory.add(number, name).number);
  }

  phones(): PhoneView[] {
    return this.network.directory.all().map((p) => this.view(p.number));
  }

  phone(number: string): PhoneView {
    return this.view(number);
  }

  scanQr(number: string, qr: string): Promise<{ jid: string; deviceId: number }> {
    return this.network.scanQr(number, qr);
  }

  /**
   * The phone sends a text to a number (every companion linked to that number receives it) or into a
   * group it is a member of (the other members' linked devices receive it).
   */
  sendText(fromNumber: string, to: string, text: string): Promise<{ id: string; delivered: number }> {
    return this.sendMessage(this.network.requirePhone(fromNumber), to, { conversation: text });
  }

  private sendMessage(phone: VirtualPhone, to: string, message: proto.IMessage): Promise<{ id: string; delivered: number }> {
    if (!to.endsWith('@g.us')) return this.network.router.fromPhone(phone, to.split('@')[0] ?? to, message);
    const group = this.network.groups.groups.get(to);
    if (!group) throw new Error(`no group ${to}`);
    if (!group.participants.has(phone.jid)) throw new Error(`${phone.number} is not a member of ${to}`);
    const members = [...group.participants.keys()].map((jid) => this.network.directory.find(jid)).filter((p) => p !== undefined);
    return this.network.router.fromPhoneToChat(phone, to, members, message);
  }

  private phonesOf(numbers: string[]): VirtualPhone[] {
    return numbers.map((n) => this.network.requirePhone(n.split('@')[0] ?? n));
  }

  /** The phone posts a text status (`status@broadcast`) that these numbers' linked devices receive. */
  postStatus(fromNumber: string, toNumbers: string[], text: string): Promise<{ id: string; delivered: number }> {
    return this.network.router.fromPhoneToChat(this.network.requirePhone(fromNumber), 'status@broadcast', this.phonesOf(toNumbers), {
      extendedTextMessage: { text },
    });
  }

  /**
   * The phone sends a text through one of its broadcast lists (`<listId>@broadcast`): each listed
   * number's linked devices receive it from the list, the phone as its sender.
   */
  sendBroadcast(
    fromNumber: string,
    toNumbers: string[],
    text: string,
    listId = String(Date.now()),
  ): Promise<{ id: string; delivered: number; chat: string }> {
    const chat = `${listId}@broadcast`;
    return this.network.router
      .fromPhoneToChat(this.network.requirePhone(fromNumber), chat, this.phonesOf(toNumbers), { conversation: text })
      .then((sent) => ({ ...sent, chat }));
  }

  /** A channel (`<id>@newsletter`) posts a text that these followers' linked devices receive. */
  postToChannel(channelJid: string, toNumbers: string[], text: string): { id: string; delivered: number } {
    if (!channelJid.endsWith('@newsletter')) throw new Error('a channel JID ends with @newsletter');
    return this.network.router.channelPost(channelJid, this.phonesOf(toNumbers), { conversation: text });
  }

  /**
   * The key a phone gives a message it points at: one it received (from its inbox, in that chat) or one
   * it sent itself to `toNumber`.
   */
  private keyFor(phone: VirtualPhone, toNumber: string, id: string): proto.IMessageKey {
    const received = phone.inbox.find((e) => e.id === id && e.kind !== 'reaction');
    if (received) {
      const group = received.chat.endsWith('@g.us');
      return { remoteJid: received.chat, fromMe: false, id, ...(group ? { participant: received.from } : {}) };
    }
    return { remoteJid: `${toNumber}@s.whatsapp.net`, fromMe: true, id };
  }

  /**
   * The phone reacts to a message (one it received, in its chat, a group's included, or one it sent to
   * `toNumber`); '' removes its reaction.
   */
  react(fromNumber: string, toNumber: string, id: string, emoji: string): Promise<{ id: string; delivered: number }> {
    const phone = this.network.requirePhone(fromNumber);
    const to = toNumber.split('@')[0] ?? toNumber;
    const key = this.keyFor(phone, to, id);
    const chat = key.remoteJid?.endsWith('@g.us') ? key.remoteJid : to;
    return this.sendMessage(phone, chat, { reactionMessage: { key, text: emoji, senderTimestampMs: Date.now() } });
  }

  /**
   * The phone votes on a poll it received from `toNumber`'s linked account (in their 1:1 chat, or in the
   * group the poll was sent to), as WhatsApp does: the chosen options (by name; none withdraws the vote)
   * encrypted with the poll's secret, in a pollUpdateMessage that names the poll. Which JIDs the key is
   * derived from is a guess taken from Baileys' issues (see docs/sandbox.md): on a lid network the
   * creator by LID, the voter by phone number in a 1:1 chat and by LID in a group (and whenever it hides
   * its number).
   */
  vote(fromNumber: string, toNumber: string, pollMessageId: string, options: string[]): Promise<{ id: string; delivered: number }> {
    const phone = this.network.requirePhone(fromNumber);
    const to = toNumber.split('@')[0] ?? toNumber;
    const entry = phone.inbox.find((e) => e.id === pollMessageId && e.kind === 'poll');
    if (!entry) throw new Error(`${fromNumber} received no poll ${pollMessageId}`);
    const poll = pollOf(entry.raw as proto.IMessage);
    const creator = this.network.directory.find(entry.from);
    if (!poll?.secret || !creator) throw new Error(`poll ${pollMessageId} carries no secret, so no vote on it can be encrypted`);
    const unknown = options.filter((o) => !poll.options.includes(o));
    if (unknown.length > 0) throw new Error(`poll ${pollMessageId} has no option ${unknown.map((o) => JSON.stringify(o)).join(', ')}`);
    const group = entry.chat.endsWith('@g.us');
    const lid = this.network.addressing.mode === 'lid';
    const vote = encryptPollVote(
      poll.options.filter((o) => options.includes(o)),
      {
        pollMsgId: pollMessageId,
        pollCreatorJid: lid ? creator.lid : creator.jid,
        voterJid: phone.hideNumber || (lid && group) ? phone.lid : phone.jid,
        secret: poll.secret,
      },
    );
    const message: proto.IMessage = {
      pollUpdateMessage: { pollCreationMessageKey: this.keyFor(phone, to, pollMessageId), vote, senderTimestampMs: Date.now() },
    };
    return group ? this.sendMessage(phone, entry.chat, message) : this.network.router.fromPhone(phone, to, message);
  }

  /** The phone edits a text it sent to `toNumber`. */
  edit(fromNumber: string, toNumber: string, id: string, text: string): Promise<{ id: string; delivered: number }> {
    const to = toNumber.split('@')[0] ?? toNumber;
    return this.network.router.fromPhone(this.network.requirePhone(fromNumber), to, {
      protocolMessage: {
        key: { remoteJid: `${to}@s.whatsapp.net`, fromMe: true, id },
        type: PROTOCOL.MESSAGE_EDIT,
        editedMessage: { conversation: text },
        timestampMs: Date.now(),
      },
    });
  }

  /** The phone deletes a message it sent to `toNumber`, for everyone. */
  revoke(fromNumber: string, toNumber: string, id: string): Promise<{ id: string; delivered: number }> {
    const to = toNumber.split('@')[0] ?? toNumber;
    return this.network.router.fromPhone(this.network.requirePhone(fromNumber), to, {
      protocolMessage: { key: { remoteJid: `${to}@s.whatsapp.net`, fromMe: true, id }, type: PROTOCOL.REVOKE },
    });
  }

  /** When the linked devices receipted a message this phone sent (their delivery receipts), and which still wait for it. */
  delivery(number: string, id: string): DeliveryView | undefined {
    return this.network.router.delivery(this.network.requirePhone(number), id);
  }

  /** Calls `listener` as each message a phone sends enters the network (after the phone encrypted it); returns the way to stop. */
  onPhoneMessage(listener: (entry: { id: string; from: string; to: string }) => void): () => void {
    this.network.router.phoneMessageListeners.add(listener);
    return () => this.network.router.phoneMessageListeners.delete(listener);
  }

  /** The phone hides its number (or shows it again): see PhoneView.hideNumber. */
  hideNumber(number: string, hide = true): PhoneView {
    this.network.requirePhone(number).hideNumber = hide;
    return this.view(number);
  }

  /** The phone refuses (or accepts again) 1:1 messages that show none of its privacy tokens. */
  requireToken(number: string, require = true): PhoneView {
    this.network.requirePhone(number).requireToken = require;
    return this.view(number);
  }

  /**
   * Gives the phone past chats and messages: a device linked to it afterwards gets them as history sync
   * (docs/sandbox.md, History sync). `chunkMessages`: messages per chunk (500 unless given).
   */
  giveHistory(
    number: string,
    input: HistoryInput,
    chunkMessages?: number,
  ): { chats: number; messages: Array<{ chat: string; id: string }> } {
    return this.network.histories.give(this.network.requirePhone(number), input, chunkMessages);
  }

  /** The history chunks the phone sent its devices, in order. */
  historySent(number: string): SentChunk[] {
    return [...(this.network.histories.sent.get(this.network.requirePhone(number).number) ?? [])];
  }

  /** The phone sends a media file (encrypted and stored on the media host as WhatsApp does). */
  async sendMedia(
    fromNumber: string,
    toNumber: string,
    media: {
      type: MediaKind;
      data: Buffer;
      mimetype: string;
      caption?: string;
      fileName?: string;
      /** audio only: a voice note */
      ptt?: boolean;
    },
  ): Promise<{ id: string; delivered: number; url: string }> {
    const mediaKey = randomBytes(32);
    const { cipherKey, iv, macKey } = await getMediaKeys(mediaKey, media.type);
    const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
    const enc = Buffer.concat([cipher.update(media.data), cipher.final()]);
    const mac = createHmac('sha256', macKey ?? Buffer.alloc(32))
      .update(Buffer.concat([iv, enc]))
      .digest()
      .subarray(0, 10);
    const file = Buffer.concat([enc, mac]);
    const { url, directPath } = this.network.media.put(file);
    const common = {
      url,
      directPath,
      mediaKey,
      mimetype: media.mimetype,
      fileSha256: createHash('sha256').update(media.data).digest(),
      fileEncSha256: createHash('sha256').update(file).digest(),
      fileLength: media.data.length,
      mediaKeyTimestamp: Math.floor(Date.now() / 1000),
    };
    const message: proto.IMessage =
      media.type === 'image'
        ? { imageMessage: { ...common, caption: media.caption } }
        : media.type === 'video'
          ? { videoMessage: { ...common, caption: media.caption } }
          : media.type === 'audio'
            ? { audioMessage: { ...common, ...(media.ptt ? { ptt: true } : {}) } }
            : { documentMessage: { ...common, caption: media.caption, fileName: media.fileName } };
    const sent = await this.network.router.fromPhone(this.network.requirePhone(fromNumber), toNumber.split('@')[0] ?? toNumber, message);
    return { ...sent, url };
  }

  enterPairingCode(number: string, code: string): Promise<{ jid: string; deviceId: number }> {
    return this.network.enterPairingCode(number, code);
  }

  groups(): GroupView[] {
    return [...this.network.groups.groups.values()].map((g) => this.network.groups.view(g));
  }

  group(id: string): GroupView | undefined {
    const group = this.network.groups.groups.get(id);
    return group ? this.network.groups.view(group) : undefined;
  }

  /** Posts the sandbox received for a channel, decoded. */
  channel(jid: string): Array<{ id: string; from: string; kind: string; content: string }> {
    return (this.network.router.newsletters.get(jid) ?? []).map((p) => ({ id: p.id, from: p.from, ...describeForInbox(p.message) }));
  }

  /**
   * The server holds the answers to this phone's linked devices' app state fetches (`w:sync:app:state`)
   * until let go (`hold` false), as a slow server would: a device closed meanwhile never gets them.
   */
  holdAppState(number: string, hold = true): void {
    this.network.requirePhone(number);
    const holds = this.network.appStateHolds;
    if (!hold) {
      holds.get(number)?.release();
      holds.delete(number);
      return;
    }
    if (holds.has(number)) return;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    holds.set(number, { held, release });
  }

  /** The link stays open but goes silent both ways, as a half-dead TCP connection does. */
  freeze(number: string, deviceId?: number): number {
    const conns = this.network.server.connectionsOf(number).filter((c) => deviceId === undefined || c.device?.deviceId === deviceId);
    for (const conn of conns) conn.frozen = true;
    return conns.length;
  }

  /** Messages with buttons from this phone's linked devices are refused with an error ack. */
  refuseButtons(number: string, refuse = true): number {
    const conns = this.network.server.connectionsOf(number);
    for (const conn of conns) conn.refuseButtons = refuse;
    return conns.length;
  }

  /** The phone loses its Signal sessions (see PhoneSignal.loseSessions); messages recover through retry receipts. */
  loseSessions(number: string): void {
    this.network.requirePhone(number).signal.loseSessions();
  }

  /** Every message to this phone fails to decrypt, until called with false. */
  failDecryption(number: string, fail = true): void {
    this.network.requirePhone(number).signal.failDecryption = fail;
  }

  /**
   * The phone's next `count` messages reach the linked devices they go to in a form those cannot
   * decrypt (a new session naming a prekey the device does not have, as after the phone restored an old
   * backup): each device shows the message as waiting, asks for it again with a retry receipt, and the
   * phone sends it again under the same id on a good session.
   */
  undecryptable(number: string, count = 1): void {
    this.network.requirePhone(number).signal.undecryptable = count;
  }

  /**
   * The delivery receipts this number's linked devices send for phones' messages take `ms` to reach the
   * network (0: at once), on every connection from now on. One still travelling when its connection closes
   * never arrives, so the message stays unreceipted and is delivered again at the device's next login.
   */
  setReceiptLag(number: string, ms: number): void {
    this.network.requirePhone(number);
    if (ms > 0) this.network.router.receiptLagMs.set(number, ms);
    else this.network.router.receiptLagMs.delete(number);
  }

  /** Delays (ms) or withholds the server's acks and receipts for a phone's linked devices. */
  setAcks(number: string, options: { delayMs?: number; withhold?: boolean }): number {
    const conns = this.network.server.connectionsOf(number);
    for (const conn of conns) {
      conn.ackDelayMs = options.delayMs ?? 0;
      conn.withholdAcks = options.withhold ?? false;
    }
    return conns.length;
  }

  /**
   * The phone reads messages it received: those with these ids, or every message of a chat (a number,
   * a JID or a group id). Sends read receipts to the senders' linked devices; answers the ids it read.
   */
  read(number: string, which: { ids?: string[]; chat?: string }): { ids: string[]; receipts: number } {
    const phone = this.network.requirePhone(number);
    const chat = which.chat === undefined ? undefined : which.chat.includes('@') ? which.chat : `${which.chat}@s.whatsapp.net`;
    const entries = phone.inbox.filter(
      (e) =>
        e.kind !== 'edit' &&
        e.kind !== 'reaction' &&
        e.kind !== 'revoke' &&
        ((which.ids?.includes(e.id) ?? false) || (chat !== undefined && e.chat === chat)),
    );
    const missing = (which.ids ?? []).filter((id) => !entries.some((e) => e.id === id));
    if (missing.length > 0) throw new Error(`${number} did not receive ${missing.join(', ')}`);
    return { ids: entries.map((e) => e.id), receipts: this.network.router.markAs(phone, entries, 'read') };
  }

  /**
   * The phone's user reads a chat in the app (a number, a JID or a group id): the account's linked
   * devices get a `read-self` receipt for the messages phones sent the account there.
   */
  readChat(number: string, chat: string): { ids: string[]; receipts: number } {
    const phone = this.network.requirePhone(number);
    return this.network.router.readSelf(phone, chat.includes('@') ? chat : `${chat}@s.whatsapp.net`);
  }

  /**
   * The phone's user archives, pins, mutes a chat or marks it read or unread in the app: the phone
   * writes an app state patch and the network tells the account's linked devices (server_sync).
   */
  async chatAction(
    number: string,
    chat: string,
    action: PhoneChatAction,
  ): Promise<{ chat: string; collection: string; version: number; notified: number }> {
    const phone = this.network.requirePhone(number);
    const jid = this.appStateJid(chat);
    const write = await this.network.appStates.phoneAction(phone, jid, action);
    return { chat: jid, collection: write.name, version: write.version, notified: this.network.announceAppState(phone, write) };
  }

  /** A chat as the app state names it: a group by its JID, a person by the address the network gives them (their LID on a lid network). */
  private appStateJid(chat: string): string {
    if (chat.endsWith('@g.us')) return chat;
    const peer = this.network.directory.find(chat.includes('@') ? chat : `${chat}@s.whatsapp.net`);
    if (!peer) throw new Error(`${chat} is not on the sandbox network`);
    return this.network.addressing.userJid(peer);
  }

  /** The phone plays voice notes it received: `played` receipts (which mean read too) to their senders. */
  play(number: string, ids: string[]): { ids: string[]; receipts: number } {
    const phone = this.network.requirePhone(number);
    const entries = phone.inbox.filter((e) => ids.includes(e.id));
    const wrong = ids.filter((id) => !entries.some((e) => e.id === id && e.kind === 'voice'));
    if (wrong.length > 0) throw new Error(`${number} has no voice note ${wrong.join(', ')}`);
    return { ids: entries.map((e) => e.id), receipts: this.network.router.markAs(phone, entries, 'played') };
  }

  inbox(number: string): InboxEntry[] {
    return [...this.network.requirePhone(number).inbox];
  }

  /** Closes a linked device's socket without a word, as a network drop would. */
  dropDevice(number: string, deviceId?: number): number {
    const conns = this.network.server.connectionsOf(number).filter((c) => deviceId === undefined || c.device?.deviceId === deviceId);
    for (const conn of conns) conn.ws.terminate();
    return conns.length;
  }

  streamError(number: string, code: number, deviceId?: number): number {
    const conns = this.network.server.connectionsOf(number).filter((c) => deviceId === undefined || c.device?.deviceId === deviceId);
    for (const conn of conns) {
      conn.send({ tag: 'stream:error', attrs: { code: String(code) } });
      setTimeout(() => conn.close(), 20);
    }
    return conns.length;
  }

  /** The phone removes a linked device: its credentials stop working. */
  logout(number: string, deviceId?: number): number {
    const phone = this.network.requirePhone(number);
    let count = 0;
    for (const device of phone.devices.values()) {
      if (deviceId !== undefined && device.deviceId !== deviceId) continue;
      device.loggedOut = true;
      count += 1;
      for (const conn of this.network.server.connectionsOf(number).filter((c) => c.device === device)) {
        conn.send({ tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] });
        setTimeout(() => conn.close(), 20);
      }
    }
    return count;
  }

  /**
   * The network refuses this number's sends past `messages` per `windowMs` (ack error 429) and its usync
   * queries past `usync` (IQ error 429 rate-overlimit); the window slides. Undefined lifts the rate.
   */
  rateLimit(number: string, rate: RateLimit | undefined): PhoneView {
    this.network.requirePhone(number);
    this.network.pushback.setRate(number, rate);
    return this.view(number);
  }

  /** For `ms` (else until lifted), the number's 1:1 messages to numbers it never exchanged one with are refused with ack 463. */
  restrict(number: string, ms?: number): PhoneView {
    this.network.requirePhone(number);
    this.network.pushback.restrict(number, ms);
    return this.view(number);
  }

  liftRestriction(number: string): PhoneView {
    this.network.requirePhone(number);
    this.network.pushback.liftRestriction(number);
    return this.view(number);
  }

  /**
   * Bans the number: its open links end with a 503 stream error, as reported of real bans, and each login
   * is refused with `<failure reason="403">` (or 402 with `code` and `expire` when temporary) until the
   * ban ends or is lifted. Answers how many links it ended.
   */
  ban(number: string, options: BanOptions = {}): { ended: number; phone: PhoneView } {
    this.network.requirePhone(number);
    this.network.pushback.ban(number, options);
    const conns = this.network.server.connectionsOf(number);
    for (const conn of conns) {
      conn.send({ tag: 'stream:error', attrs: { code: '503' } });
      setTimeout(() => conn.close(), 20);
    }
    return { ended: conns.length, phone: this.view(number) };
  }

  unban(number: string): PhoneView {
    this.network.requirePhone(number);
    this.network.pushback.unban(number);
    return this.view(number);
  }

  setTrace(enabled: boolean): void {
    this.network.trace.enabled = enabled;
  }

  /** Messages that did not decrypt, on a phone or on a linked device (the last 1,000, oldest first). */
  decryptFailures(): DecryptFailure[] {
    return this.network.router.decryptFailures();
  }

  trace(): TraceEntry[] {
    return this.network.trace.read();
  }

  /** The read receipts linked devices sent for a message this phone sent (`by`: the reading account's number). */
  readsOf(number: string, id: string): ReadMark[] {
    return this.network.chats.readsOf(this.network.requirePhone(number), id);
  }

  /**
   * The phone goes online or offline, or types, records or stops in its chat with `toNumber`: that
   * account's linked devices get it when they subscribed to this phone's presence. Answers how many did.
   */
  sendPresence(number: string, toNumber: string, presence: PhonePresence): { delivered: number } {
    const to = toNumber.split('@')[0] ?? toNumber;
    return { delivered: this.network.chats.phonePresence(this.network.requirePhone(number), to, presence) };
  }

  /** The presence a linked account last set for itself (available or unavailable), if any. */
  accountPresence(number: string): AccountPresence | null {
    this.network.requirePhone(number);
    return this.network.chats.accountPresence(number) ?? null;
  }

  /** What the phone was shown of linked accounts typing or recording to it (and stopping), oldest first. */
  typingSeen(number: string): TypingSeen[] {
    this.network.requirePhone(number);
    return this.network.chats.typingSeenBy(number);
  }

  /** The phone calls a number: its linked devices ring (a call offer). */
  placeCall(number: string, toNumber: string, isVideo = false): { callId: string; delivered: number } {
    return this.network.chats.placeCall(this.network.requirePhone(number), toNumber.split('@')[0] ?? toNumber, isVideo);
  }

  /** A call a phone placed: ringing, or rejected by a linked device. */
  call(callId: string): CallView | undefined {
    return this.network.chats.call(callId);
  }

  /**
   * A phone (by number) or a group (by JID) sets a new profile picture: a blank PNG unless `data` is
   * given; `hidden` hides it from everyone else (the network answers 401 not-authorized).
   */
  setPicture(owner: string, options: { hidden?: boolean; data?: Buffer; mimetype?: string } = {}): PictureView {
    return this.network.pictures.set(owner, options);
  }

  /** The phone or group removes its picture (the network answers 404 item-not-found); answers whether it had one. */
  removePicture(owner: string): boolean {
    return this.network.pictures.remove(owner);
  }

  picture(owner: string): PictureView | undefined {
    return this.network.pictures.get(owner);
  }

  dispose(): void {
    this.network.trace.clear();
  }

  private view(number: string): PhoneView {
    const phone = this.network.requirePhone(number);
    return {
      number: phone.number,
      name: phone.name,
      jid: phone.jid,
      lid: phone.lid,
      devices: [...phone.devices.values()].filter((d) => !d.loggedOut).map((d) => d.deviceId),
      hideNumber: phone.hideNumber,
      requireToken: phone.requireToken,
      tokensIssuedTo: [...phone.tokensIssued.keys()],
      pushback: this.network.pushback.view(phone.number),
    };
  }
}
