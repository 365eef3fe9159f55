import { getContentType, isLidUser, isPnUser, normalizeMessageContent, proto } from 'baileys';
import type { WAMessage } from 'baileys';
import { completePerson, personOf, shownAddress } from './baileys-lids.ts';
import type { LidBook, Person } from './baileys-lids.ts';
import type { ReceivedMedia, ReceivedMediaType, ReceivedMessage } from '../ports/incoming.ts';
import type { ChatEvent } from '../ports/network.ts';

interface Described {
  type: string;
  content: string;
}

const describeLocation = (loc: proto.Message.ILocationMessage | proto.Message.ILiveLocationMessage): string => {
  const name = 'name' in loc && loc.name ? ` ${loc.name}` : '';
  return `${loc.degreesLatitude ?? 0},${loc.degreesLongitude ?? 0}${name}`;
};

/** The spec's `type` and `content` for one message: the text, the caption, or a short description. */
export const describeMessage = (raw: proto.IMessage | null | undefined): Described | null => {
  const message = normalizeMessageContent(raw);
  if (!message) return null;
  const kind = getContentType(message);
  switch (kind) {
    case 'conversation':
      return { type: 'text', content: message.conversation ?? '' };
    case 'extendedTextMessage':
      return { type: 'text', content: message.extendedTextMessage?.text ?? '' };
    case 'imageMessage':
      return { type: 'image', content: message.imageMessage?.caption || '[image]' };
    case 'videoMessage':
      return { type: 'video', content: message.videoMessage?.caption || '[video]' };
    case 'audioMessage':
      return { type: 'audio', content: message.audioMessage?.ptt ? '[voice note]' : '[audio]' };
    case 'documentMessage':
      return { type: 'document', content: message.documentMessage?.caption || message.documentMessage?.fileName || '[document]' };
    case 'documentWithCaptionMessage': {
      const doc = message.documentWithCaptionMessage?.message?.documentMessage;
      return { type: 'document', content: doc?.caption || doc?.fileName || '[document]' };
    }
    case 'stickerMessage':
      return { type: 'sticker', content: '[sticker]' };
    case 'locationMessage':
      return { type: 'location', content: describeLocation(message.locationMessage ?? {}) };
    case 'liveLocationMessage':
      return { type: 'location', content: describeLocation(message.liveLocationMessage ?? {}) };
    case 'contactMessage':
      return { type: 'contact', content: message.contactMessage?.displayName || '[contact]' };
    case 'contactsArrayMessage':
      return { type: 'contact', content: message.contactsArrayMessage?.displayName || '[contacts]' };
    case 'reactionMessage':
      return { type: 'reaction', content: message.reactionMessage?.text ?? '' };
    case 'pollCreationMessage':
    case 'pollCreationMessageV2':
    case 'pollCreationMessageV3':
      return { type: 'poll', content: (message[kind] as proto.Message.IPollCreationMessage | null)?.name ?? '[poll]' };
    case 'pollUpdateMessage':
      // The choice is encrypted with the poll's secret: the item names the poll, the vote comes decrypted beside it.
      return { type: 'poll_vote', content: message.pollUpdateMessage?.pollCreationMessageKey?.id ?? '' };
    case 'buttonsResponseMessage':
      return { type: 'button_reply', content: message.buttonsResponseMessage?.selectedDisplayText ?? '' };
    case 'templateButtonReplyMessage':
      return { type: 'button_reply', content: message.templateButtonReplyMessage?.selectedDisplayText ?? '' };
    case 'listResponseMessage':
      return { type: 'list_reply', content: message.listResponseMessage?.title ?? '' };
    case 'protocolMessage': {
      const protocol = message.protocolMessage;
      if (protocol?.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) {
        const edited = describeMessage(protocol.editedMessage);
        return { type: 'edit', content: edited?.content ?? '' };
      }
      if (protocol?.type === proto.Message.ProtocolMessage.Type.REVOKE) return { type: 'revoke', content: protocol.key?.id ?? '' };
      return null;
    }
    case 'senderKeyDistributionMessage':
    case 'messageContextInfo':
    case undefined:
      return null;
    default:
      return { type: String(kind).replace(/Message$/, ''), content: `[${String(kind)}]` };
  }
};

type MediaFields = proto.Message.IImageMessage &
  proto.Message.IVideoMessage &
  proto.Message.IAudioMessage &
  proto.Message.IDocumentMessage &
  proto.Message.IStickerMessage;

const base64 = (bytes: Uint8Array | null | undefined): string | undefined =>
  bytes && bytes.length > 0 ? Buffer.from(bytes).toString('base64') : undefined;

/** The file a message carries, with what it takes to fetch and decrypt it again; undefined for other messages. */
export const mediaOf = (raw: proto.IMessage | null | undefined): ReceivedMedia | undefined => {
  const message = normalizeMessageContent(raw);
  if (!message) return undefined;
  const found: Array<[ReceivedMediaType, MediaFields | null | undefined]> = [
    ['image', message.imageMessage],
    ['video', message.videoMessage ?? message.ptvMessage],
    ['audio', message.audioMessage],
    ['document', message.documentMessage ?? message.documentWithCaptionMessage?.message?.documentMessage],
    ['sticker', message.stickerMessage],
  ];
  for (const [mediaType, media] of found) {
    const mediaKey = base64(media?.mediaKey);
    if (!media || !mediaKey || !(media.directPath || media.url)) continue;
    return {
      mediaType,
      mediaKey,
      ...(media.directPath ? { directPath: media.directPath } : {}),
      ...(media.url ? { url: media.url } : {}),
      mimetype: media.mimetype || 'application/octet-stream',
      size: Number(media.fileLength ?? 0),
      fileName: mediaType === 'document' && media.fileName ? media.fileName : null,
      ...(base64(media.fileSha256) ? { fileSha256: base64(media.fileSha256) } : {}),
    };
  }
  return undefined;
};

/** A message kept for quoting is at most this big; a larger one (a file with a large preview) is quoted by its text. */
const QUOTABLE_MAX_BYTES = 8 * 1024;

/** The message a reaction, an edit, a delete or a poll vote is about. */
const refersToOf = (raw: proto.IMessage | null | undefined): string | undefined => {
  const message = normalizeMessageContent(raw);
  return (
    message?.reactionMessage?.key?.id ??
    message?.protocolMessage?.key?.id ??
    message?.pollUpdateMessage?.pollCreationMessageKey?.id ??
    undefined
  );
};

const quotableOf = (raw: proto.IMessage | null | undefined): string | undefined => {
  const message = normalizeMessageContent(raw);
  if (!message) return undefined;
  const bytes = proto.Message.encode(message).finish();
  return bytes.length <= QUOTABLE_MAX_BYTES ? Buffer.from(bytes).toString('base64') : undefined;
};

const mediaOfMessage = (raw: proto.IMessage | null | undefined): { media?: ReceivedMedia } => {
  const media = mediaOf(raw);
  return media ? { media } : {};
};

/** The chat of a received message and its sender, each by phone-number JID when known (see toIncoming). */
const peopleOf = async (
  msg: WAMessage,
  own: OwnAddresses,
  book?: LidBook,
): Promise<{ chat: Person; chatId: string; sender: Person } | null> => {
  // rc14 files the sender's other address as remoteJidAlt in every chat that is not a group: in a
  // status or broadcast list it belongs to the participant, not to the chat.
  const oneToOne = isPnUser(msg.key.remoteJid ?? '') || isLidUser(msg.key.remoteJid ?? '');
  const chat = oneToOne ? await completePerson(personOf(msg.key.remoteJid, msg.key.remoteJidAlt), book) : personOf(msg.key.remoteJid);
  const chatId = shownAddress(chat);
  if (!chatId) return null;
  const sender = msg.key.fromMe
    ? personOf(own.jid, own.lid)
    : msg.key.participant
      ? await completePerson(personOf(msg.key.participant, msg.key.participantAlt ?? (oneToOne ? undefined : msg.key.remoteJidAlt)), book)
      : chat;
  return { chat, chatId, sender };
};

/**
 * A message this link could not decrypt (yet): rc14 hands it over as a stub of type CIPHERTEXT, without
 * content, after it asked the sender for it again (a retry receipt); the sender's resend arrives under
 * the same id. Null for anything else, and for a message of our own devices' protocol traffic ('peer').
 */
export const waitingOf = async (
  msg: WAMessage,
  own: OwnAddresses,
  book?: LidBook,
): Promise<Extract<ChatEvent, { kind: 'waiting' }> | null> => {
  if (msg.messageStubType !== proto.WebMessageInfo.StubType.CIPHERTEXT || msg.message || msg.category === 'peer' || !msg.key.id) {
    return null;
  }
  const people = await peopleOf(msg, own, book);
  if (!people) return null;
  const { chat, chatId, sender } = people;
  return {
    kind: 'waiting',
    waMessageId: msg.key.id,
    chatJid: chatId,
    chatLid: chat.lid ?? null,
    from: shownAddress(sender) ?? '',
    fromLid: sender.lid ?? null,
    fromMe: Boolean(msg.key.fromMe),
    messageTimestamp: Number(msg.messageTimestamp ?? 0),
  };
};

/** The kinds whose content is a description when they have no caption ('[image]'): the store keeps no text for those. */
const CAPTIONED = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** The message's text or caption, as the store keeps it: none for a file without a caption. */
const textOf = (raw: proto.IMessage | null | undefined, described: Described): string | undefined => {
  if (!CAPTIONED.has(described.type)) return described.content;
  const message = normalizeMessageContent(raw);
  const caption =
    message?.imageMessage?.caption ??
    message?.videoMessage?.caption ??
    message?.documentMessage?.caption ??
    message?.documentWithCaptionMessage?.message?.documentMessage?.caption;
  return caption || undefined;
};

/** The message a reply quotes (its network id) and the people it mentions, from the message's context. */
const contextOf = (raw: proto.IMessage | null | undefined): { quotedId?: string; mentions?: string[] } => {
  const message = normalizeMessageContent(raw);
  const kind = message ? getContentType(message) : undefined;
  const inner = kind && message ? (message[kind] as { contextInfo?: proto.IContextInfo | null } | null | undefined) : undefined;
  const context = inner && typeof inner === 'object' ? inner.contextInfo : undefined;
  if (!context) return {};
  const mentions = (context.mentionedJid ?? []).filter((jid) => typeof jid === 'string' && jid.length > 0);
  return {
    ...(context.stanzaId ? { quotedId: context.stanzaId } : {}),
    ...(mentions.length > 0 ? { mentions } : {}),
  };
};

/** The kinds of message that are about another message. */
const REFERRING = new Set(['reaction', 'edit', 'revoke', 'poll_vote']);

/** The session's own addresses: its phone-number JID and its LID (either may carry a device). */
export interface OwnAddresses {
  jid?: string | null;
  lid?: string | null;
}

/**
 * A received network message as a buffer item; null for what users do not see (key distribution, receipts).
 * Baileys 7 addresses most people by LID, with the phone number as the alternate (`remoteJidAlt`,
 * `participantAlt`) when the network gave it; users know their contacts by number, so `chatId` and
 * `from` carry the phone-number JID whenever it is known (from the stanza or the mapping store), and
 * the LID otherwise; `chatLid` and `fromLid` carry the LID beside it. A message of ours (sent from
 * the phone or another linked device) is from the session's own addresses.
 */
export const toIncoming = async (msg: WAMessage, own: OwnAddresses, book?: LidBook): Promise<ReceivedMessage | null> => {
  const described = describeMessage(msg.message);
  if (!described) return null;
  const people = await peopleOf(msg, own, book);
  if (!people) return null;
  const { chat, chatId, sender } = people;
  return {
    chatId,
    chatLid: chat.lid ?? null,
    from: shownAddress(sender) ?? '',
    fromLid: sender.lid ?? null,
    fromMe: Boolean(msg.key.fromMe),
    type: described.type,
    content: described.content,
    pushName: msg.pushName ?? '',
    messageTimestamp: Number(msg.messageTimestamp ?? 0),
    messageId: msg.key.id ?? '',
    ...(msg.key.id && described.type !== 'edit' && described.type !== 'revoke' ? mediaOfMessage(msg.message) : {}),
    ...(msg.key.remoteJid && msg.key.id
      ? {
          key: {
            remoteJid: msg.key.remoteJid,
            id: msg.key.id,
            fromMe: Boolean(msg.key.fromMe),
            ...(msg.key.participant ? { participant: msg.key.participant } : {}),
          },
        }
      : {}),
    ...(REFERRING.has(described.type)
      ? { refersTo: refersToOf(msg.message) }
      : { quotable: quotableOf(msg.message), text: textOf(msg.message, described), ...contextOf(msg.message) }),
  };
};
