import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { proto } from 'baileys';
import type { Directory, VirtualPhone } from './directory.ts';
import type { MediaHost } from './media.ts';

/** A message a phone had before a device linked (docs/sandbox.md, History sync). */
export interface PastMessage {
  id: string;
  /** written on the phone (true) or received from the chat's other side */
  fromMe: boolean;
  text: string;
  /** Unix seconds */
  at: number;
  /** in a group: the number that wrote it (not for fromMe) */
  author?: string;
  /** each reactor's current reaction: `from` a number, or `me` for the phone's own */
  reactions?: PastReaction[];
}

export interface PastReaction {
  from: string;
  emoji: string;
  /** Unix seconds */
  at: number;
}

/** One of a phone's past chats: a person (by number) or a group, with its messages oldest first. */
export interface PastChat {
  /** the chat's JID: a person's phone-number JID, or a group's */
  jid: string;
  lid?: string;
  name?: string;
  messages: PastMessage[];
}

export interface HistoryInput {
  chats: Array<{
    /** a number (or a group's JID) */
    with: string;
    name?: string;
    messages: Array<{
      id?: string;
      fromMe?: boolean;
      text: string;
      at: number | string;
      author?: string;
      reactions?: Array<{ from: string; emoji: string; at: number | string }>;
    }>;
  }>;
}

/** What a history chunk is, as the notification names it (WAProto Message.HistorySyncType). */
export type SyncType = 'INITIAL_BOOTSTRAP' | 'RECENT' | 'FULL' | 'PUSH_NAME' | 'ON_DEMAND';

/** A sent chunk, as the control API reports it. */
export interface SentChunk {
  syncType: SyncType;
  chunkOrder: number;
  progress: number;
  messages: number;
  bytes: number;
}

/** Messages per chunk unless the phone says otherwise (real phones send a few hundred to a few thousand). */
export const DEFAULT_CHUNK_MESSAGES = 500;
/** Without `requireFullSync` in its DeviceProps, a companion gets this many days (or its own `recentSyncDaysLimit`). */
export const RECENT_DAYS = 90;

const newId = (): string => `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
const seconds = (at: number | string): number => (typeof at === 'number' ? at : Math.floor(Date.parse(at) / 1000));

/**
 * A phone's past chats and messages, and the history sync it sends to a newly linked device: the
 * `HistorySync` protobuf of each chunk, deflated, encrypted as media of type `md-msg-hist` and put on the
 * media host, announced to the device by a HISTORY_SYNC_NOTIFICATION protocol message from the phone
 * (Baileys' Utils/history.js downloadHistory and processHistoryMessage read it).
 */
export class PhoneHistories {
  private readonly byNumber = new Map<string, { chats: Map<string, PastChat>; chunkMessages: number }>();
  /** every chunk sent, by phone, for the control API */
  readonly sent = new Map<string, SentChunk[]>();

  constructor(
    private readonly directory: Directory,
    private readonly media: MediaHost,
  ) {}

  /** Gives the phone past chats (added to what it had; a message id it holds already is replaced). */
  give(phone: VirtualPhone, input: HistoryInput, chunkMessages?: number): { chats: number; messages: Array<{ chat: string; id: string }> } {
    const held = this.byNumber.get(phone.number) ?? { chats: new Map<string, PastChat>(), chunkMessages: DEFAULT_CHUNK_MESSAGES };
    if (chunkMessages) held.chunkMessages = chunkMessages;
    this.byNumber.set(phone.number, held);
    const ids: Array<{ chat: string; id: string }> = [];
    for (const given of input.chats) {
      const jid = given.with.includes('@') ? given.with : `${given.with}@s.whatsapp.net`;
      const peer = jid.endsWith('@s.whatsapp.net') ? this.directory.get(jid.split('@')[0] ?? '') : undefined;
      const chat = held.chats.get(jid) ?? { jid, messages: [] };
      if (peer) chat.lid = peer.lid;
      chat.name = given.name ?? chat.name ?? peer?.name;
      for (const m of given.messages) {
        const id = m.id ?? newId();
        chat.messages = chat.messages.filter((old) => old.id !== id);
        const reactions = m.reactions?.map((r) => ({ from: r.from, emoji: r.emoji, at: seconds(r.at) }));
        chat.messages.push({
          id,
          fromMe: m.fromMe ?? false,
          text: m.text,
          at: seconds(m.at),
          ...(m.author ? { author: m.author } : {}),
          ...(reactions?.length ? { reactions } : {}),
        });
        ids.push({ chat: jid, id });
      }
      chat.messages.sort((a, b) => a.at - b.at);
      held.chats.set(jid, chat);
    }
    return { chats: held.chats.size, messages: ids };
  }

  /**
   * The chunks a newly linked device gets, in order: the recent messages (newest first) as one
   * INITIAL_BOOTSTRAP chunk and RECENT chunks after it (progress up to 100), the older ones as FULL chunks
   * when the device asked for a full sync (DeviceProps.requireFullSync), then one PUSH_NAME chunk. A phone
   * with no past messages still sends an (empty) INITIAL_BOOTSTRAP and PUSH_NAME, as Baileys waits for one.
   */
  async chunksFor(
    phone: VirtualPhone,
    device: { requireFullSync?: boolean; recentDays?: number },
  ): Promise<proto.Message.IHistorySyncNotification[]> {
    const held = this.byNumber.get(phone.number);
    const chats = [...(held?.chats.values() ?? [])];
    const per = held?.chunkMessages ?? DEFAULT_CHUNK_MESSAGES;
    const since = Date.now() / 1000 - (device.recentDays || RECENT_DAYS) * 86_400;
    const all = chats.flatMap((chat) => chat.messages.map((message) => ({ chat, message }))).sort((a, b) => b.message.at - a.message.at);
    const recent = all.filter((m) => m.message.at >= since);
    const older = device.requireFullSync ? all.filter((m) => m.message.at < since) : [];
    const notifications: proto.Message.IHistorySyncNotification[] = [];
    let order = 0;
    const recentChunks = Math.max(1, Math.ceil(recent.length / per));
    for (let i = 0; i < recentChunks; i++) {
      const slice = recent.slice(i * per, (i + 1) * per);
      const syncType = i === 0 ? 'INITIAL_BOOTSTRAP' : 'RECENT';
      // The bootstrap names every chat, even one with no recent message.
      const named = i === 0 ? chats : [];
      notifications.push(await this.chunk(phone, syncType, order++, Math.round((100 * (i + 1)) / recentChunks), slice, named));
    }
    const fullChunks = Math.ceil(older.length / per);
    for (let i = 0; i < fullChunks; i++) {
      const slice = older.slice(i * per, (i + 1) * per);
      notifications.push(await this.chunk(phone, 'FULL', order++, Math.round((100 * (i + 1)) / fullChunks), slice, []));
    }
    notifications.push(await this.chunk(phone, 'PUSH_NAME', order++, 100, [], chats));
    return notifications;
  }

  /**
   * An on-demand request (PeerDataOperationRequestMessage of type HISTORY_SYNC_ON_DEMAND, as Baileys'
   * fetchMessageHistory sends it): the `count` messages of the chat just older than the oldest the device
   * has, as one ON_DEMAND chunk; `requestId` (the request's message id) comes back as peerDataRequestSessionId.
   */
  async onDemand(
    phone: VirtualPhone,
    request: proto.Message.PeerDataOperationRequestMessage.IHistorySyncOnDemandRequest,
    requestId: string,
  ): Promise<proto.Message.IHistorySyncNotification> {
    const jid = request.chatJid ?? '';
    const held = this.byNumber.get(phone.number);
    const chat =
      held?.chats.get(jid) ??
      [...(held?.chats.values() ?? [])].find((c) => c.lid === jid || (jid.endsWith('@lid') && c.lid?.split('@')[0] === jid.split('@')[0]));
    const messages = chat?.messages ?? [];
    const oldestAt = Number(request.oldestMsgTimestampMs ?? 0) / 1000;
    const known = messages.findIndex((m) => m.id === request.oldestMsgId);
    const before = known >= 0 ? messages.slice(0, known) : messages.filter((m) => oldestAt === 0 || m.at < oldestAt);
    const count = Math.max(0, request.onDemandMsgCount ?? 0);
    const slice = chat ? before.slice(Math.max(0, before.length - count)).map((message) => ({ chat, message })) : [];
    const notification = await this.chunk(phone, 'ON_DEMAND', 0, 100, slice.reverse(), []);
    return { ...notification, peerDataRequestSessionId: requestId };
  }

  /** One chunk: its HistorySync, deflated and encrypted onto the media host, and the notification that points at it. */
  private async chunk(
    phone: VirtualPhone,
    syncType: SyncType,
    chunkOrder: number,
    progress: number,
    messages: Array<{ chat: PastChat; message: PastMessage }>,
    named: PastChat[],
  ): Promise<proto.Message.IHistorySyncNotification> {
    const byChat = new Map<string, { chat: PastChat; messages: PastMessage[] }>();
    for (const chat of named) byChat.set(chat.jid, { chat, messages: [] });
    for (const { chat, message } of messages) {
      const entry = byChat.get(chat.jid) ?? { chat, messages: [] };
      entry.messages.push(message);
      byChat.set(chat.jid, entry);
    }
    const type = proto.HistorySync.HistorySyncType[syncType];
    const sync: proto.IHistorySync =
      syncType === 'PUSH_NAME'
        ? {
            syncType: type,
            chunkOrder,
            progress,
            pushnames: named.filter((c) => c.name && !c.jid.endsWith('@g.us')).map((c) => ({ id: c.jid, pushname: c.name })),
          }
        : {
            syncType: type,
            chunkOrder,
            progress,
            conversations: [...byChat.values()].map(({ chat, messages: list }) => ({
              id: chat.jid,
              ...(chat.lid ? { lidJid: chat.lid } : {}),
              ...(chat.name ? { name: chat.name } : {}),
              conversationTimestamp: list[0]?.at ?? chat.messages.at(-1)?.at ?? 0,
              // newest first, as phones send them (processHistoryMessage keeps the first as the chat's latest)
              messages: list.map((m, i) => ({ msgOrderId: list.length - i, message: webMessageOf(phone, chat, m) })),
            })),
          };
    const deflated = deflateSync(proto.HistorySync.encode(sync).finish());
    const { mediaKey, directPath, fileSha256, fileEncSha256, fileLength } = await this.media.putEncrypted(deflated, 'md-msg-hist');
    const log = this.sent.get(phone.number) ?? [];
    log.push({ syncType, chunkOrder, progress, messages: messages.length, bytes: deflated.length });
    this.sent.set(phone.number, log);
    return {
      fileSha256,
      fileEncSha256,
      fileLength,
      mediaKey,
      directPath,
      syncType: proto.Message.HistorySyncType[syncType],
      chunkOrder,
      progress,
    };
  }
}

/** A past message as the phone keeps it: a WebMessageInfo with the chat as remoteJid. */
const webMessageOf = (phone: VirtualPhone, chat: PastChat, m: PastMessage): proto.IWebMessageInfo => {
  const group = chat.jid.endsWith('@g.us');
  return {
    key: {
      remoteJid: chat.jid,
      fromMe: m.fromMe,
      id: m.id,
      ...(group && !m.fromMe && m.author ? { participant: `${m.author}@s.whatsapp.net` } : {}),
    },
    message: { conversation: m.text },
    messageTimestamp: m.at,
    ...(!m.fromMe && !group && chat.name ? { pushName: chat.name } : {}),
    ...(m.fromMe ? { pushName: phone.name } : {}),
    status: m.fromMe ? proto.WebMessageInfo.Status.READ : proto.WebMessageInfo.Status.DELIVERY_ACK,
    ...(m.reactions?.length ? { reactions: m.reactions.map((r) => reactionOf(chat, r)) } : {}),
  };
};

/**
 * A reaction a phone keeps on a message (WebMessageInfo.reactions): the key of the reactor's own
 * reaction message (fromMe for the phone's own; in a group the reactor as participant), its emoji and time.
 */
const reactionOf = (chat: PastChat, r: PastReaction): proto.IReaction => {
  const mine = r.from === 'me';
  return {
    key: {
      remoteJid: chat.jid,
      fromMe: mine,
      id: newId(),
      ...(chat.jid.endsWith('@g.us') && !mine ? { participant: `${r.from}@s.whatsapp.net` } : {}),
    },
    text: r.emoji,
    senderTimestampMs: r.at * 1000,
  };
};
