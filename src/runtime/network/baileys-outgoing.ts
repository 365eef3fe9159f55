import { generateWAMessageFromContent, proto } from 'baileys';
import type { AnyMessageContent, WAMessage, WASocket } from 'baileys';
import type { MessageKeyRef } from '../ports/incoming.ts';
import type { ButtonSpec, OutgoingContent, SendOptions, SendResult, StatusContent } from '../ports/network.ts';

const nativeFlowButton = (button: ButtonSpec): proto.Message.InteractiveMessage.NativeFlowMessage.INativeFlowButton => {
  switch (button.type) {
    case 'reply':
      return { name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: button.text, id: button.id }) };
    case 'url':
      return {
        name: 'cta_url',
        buttonParamsJson: JSON.stringify({ display_text: button.text, url: button.url, merchant_url: button.url }),
      };
    case 'call':
      return { name: 'cta_call', buttonParamsJson: JSON.stringify({ display_text: button.text, phone_number: button.phoneNumber }) };
    case 'copy':
      return { name: 'cta_copy', buttonParamsJson: JSON.stringify({ display_text: button.text, copy_code: button.copyCode }) };
  }
};

const vcardOf = (displayName: string, phone: string): string =>
  ['BEGIN:VCARD', 'VERSION:3.0', `FN:${displayName}`, `TEL;type=CELL;waid=${phone}:+${phone}`, 'END:VCARD'].join('\n');

const toContent = (content: Exclude<OutgoingContent, { kind: 'buttons' }>): AnyMessageContent => {
  const mentions = content.mentions?.length ? { mentions: content.mentions } : {};
  switch (content.kind) {
    case 'text':
      return { text: content.text, ...mentions };
    case 'media':
      switch (content.mediaType) {
        case 'image':
          return { image: content.data, caption: content.caption, mimetype: content.mimetype, ...mentions };
        case 'video':
          return { video: content.data, caption: content.caption, mimetype: content.mimetype, ...mentions };
        case 'audio':
          return {
            audio: content.data,
            ptt: content.ptt ?? false,
            mimetype: content.mimetype ?? (content.ptt ? 'audio/ogg; codecs=opus' : 'audio/mpeg'),
          };
        case 'document':
          return {
            document: content.data,
            mimetype: content.mimetype ?? 'application/octet-stream',
            fileName: content.fileName ?? 'file',
            caption: content.caption,
            // Baileys' types list mentions on texts, images and videos; it sets them on any message's contextInfo
            ...mentions,
          };
      }
      break;
    case 'contact':
      return {
        contacts: {
          displayName: content.displayName,
          contacts: [{ displayName: content.displayName, vcard: vcardOf(content.displayName, content.phone) }],
        },
      };
    case 'poll':
      return {
        poll: {
          name: content.name,
          values: content.options,
          selectableCount: content.selectableCount,
          messageSecret: Buffer.from(content.messageSecret, 'base64'),
        },
      };
    case 'location':
      return {
        location: {
          degreesLatitude: content.latitude,
          degreesLongitude: content.longitude,
          name: content.name,
          address: content.address,
        },
      };
  }
};

/** The message a reply quotes, as Baileys takes it: it builds contextInfo (stanzaId, participant, quotedMessage) from it. */
const quotedOf = (content: OutgoingContent): WAMessage | undefined =>
  content.quoted
    ? {
        key: content.quoted.key,
        message: content.quoted.message
          ? proto.Message.decode(Buffer.from(content.quoted.message, 'base64'))
          : proto.Message.fromObject({ conversation: content.quoted.text }),
      }
    : undefined;

/** Sends one message through a connected socket; interactive buttons go out as a native-flow message. */
export const sendThrough = async (sock: WASocket, jid: string, content: OutgoingContent, options: SendOptions): Promise<SendResult> => {
  const quoted = quotedOf(content);
  if (content.kind === 'buttons') {
    const message = proto.Message.fromObject({
      interactiveMessage: {
        ...(content.header ? { header: { title: content.header, hasMediaAttachment: false } } : {}),
        body: { text: content.body },
        ...(content.footer ? { footer: { text: content.footer } } : {}),
        nativeFlowMessage: { buttons: content.buttons.map(nativeFlowButton), messageParamsJson: '{}' },
        ...(content.mentions?.length ? { contextInfo: { mentionedJid: content.mentions } } : {}),
      },
    });
    const full = generateWAMessageFromContent(jid, message, {
      userJid: sock.user?.id ?? '',
      messageId: options.messageId,
      ...(quoted ? { quoted } : {}),
    });
    const id = await sock.relayMessage(jid, full.message ?? message, { messageId: full.key.id ?? undefined });
    return { waMessageId: id, remoteJid: jid, message: proto.Message.encode(full.message ?? message).finish() };
  }
  const sent = await sock.sendMessage(jid, toContent(content), { messageId: options.messageId, ...(quoted ? { quoted } : {}) });
  if (!sent?.key.id) throw new Error('the network did not accept the message');
  return { waMessageId: sent.key.id, remoteJid: jid, ...(sent.message ? { message: proto.Message.encode(sent.message).finish() } : {}) };
};

/** A reaction to a message of the chat; Baileys sends an empty text as the reaction's removal. */
export const reactThrough = async (sock: WASocket, chatJid: string, key: MessageKeyRef, emoji: string): Promise<string> => {
  const sent = await sock.sendMessage(chatJid, { react: { text: emoji, key } });
  if (!sent?.key.id) throw new Error('the network did not accept the reaction');
  return sent.key.id;
};

/** Deletes one of our messages for everyone (a protocol message of type REVOKE). */
export const revokeThrough = async (sock: WASocket, remoteJid: string, waMessageId: string): Promise<void> => {
  await sock.sendMessage(remoteJid, { delete: { remoteJid, fromMe: true, id: waMessageId } });
};

const STATUS_JID = 'status@broadcast';

/** Statuses go to status@broadcast, encrypted for the listed recipients only. */
export const sendStatusThrough = async (
  sock: WASocket,
  content: StatusContent,
  recipients: string[],
  options: SendOptions,
): Promise<SendResult> => {
  const message: AnyMessageContent =
    content.kind === 'text'
      ? { text: content.text }
      : content.mediaType === 'image'
        ? { image: content.data, caption: content.caption, mimetype: content.mimetype }
        : content.mediaType === 'video'
          ? { video: content.data, caption: content.caption, mimetype: content.mimetype }
          : { audio: content.data, mimetype: content.mimetype ?? 'audio/mpeg' };
  const sent = await sock.sendMessage(STATUS_JID, message, {
    statusJidList: recipients,
    broadcast: true,
    messageId: options.messageId,
    ...(content.kind === 'text' && content.backgroundColor ? { backgroundColor: content.backgroundColor } : {}),
  });
  if (!sent?.key.id) throw new Error('the network did not accept the status');
  return { waMessageId: sent.key.id, remoteJid: STATUS_JID };
};
