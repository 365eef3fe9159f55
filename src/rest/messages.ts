import { z } from 'zod';
import { downloadIncomingMedia } from '../resolvers/incoming-media.ts';
import {
  editMessage,
  editSchema,
  getMessage,
  historySchema,
  incomingSchema,
  interactiveSchema,
  listMessages,
  mediaSchema,
  readIncoming,
  richSchema,
  sendInteractive,
  sendMedia,
  sendRich,
  sendSchema,
  sendText,
  sendTextShortcut,
  sendTyping,
  shortcutSendSchema,
  typingSchema,
} from '../resolvers/messages.ts';
import { deleteMessage, reactSchema, reactToMessage } from '../resolvers/message-actions.ts';
import { listReceipts } from '../resolvers/receipts.ts';
import { dateTime, ok, sent } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Messages';
const S = '/sessions/:sessionId';

export const messageRecord = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    toNumber: z.string(),
    content: z.string(),
    status: z.enum(['PENDING', 'SENT', 'FAILED']),
    sentAt: dateTime.nullable(),
    createdAt: dateTime,
    waMessageId: z.string().nullable(),
    remoteJid: z.string().nullable(),
    toLid: z.string().nullable().describe("extension: the recipient's LID beside toNumber (1:1 messages), when the network told it"),
    error: z.string().nullable().describe('extension: why a FAILED message failed'),
    deliveredAt: dateTime.nullable().describe('extension: when the recipient (in a group, the first member) acknowledged delivery'),
    readAt: dateTime.nullable().describe('extension: when it was first read'),
    playedAt: dateTime.nullable().describe('extension: when a voice note was first played'),
    deletedAt: dateTime.nullable().describe('extension: when it was deleted for everyone'),
    sendAt: dateTime.nullable().describe("extension: when a PENDING message goes (a scheduled message's time, a paced message's slot)"),
  })
  .loose()
  .meta({ id: 'MessageRecord' });
const receipt = z
  .object({
    recipient: z.string().describe('the user JID that acknowledged: its phone-number JID when known, else its LID JID'),
    recipientLid: z.string().nullable().describe("extension: the recipient's LID, when the network told it"),
    deliveredAt: dateTime.nullable(),
    readAt: dateTime.nullable(),
    playedAt: dateTime.nullable(),
  })
  .meta({ id: 'Receipt' });
const incomingItem = z
  .object({
    eventId: z.number().int(),
    sessionId: z.string(),
    chatId: z.string(),
    chatLid: z.string().nullable().describe("extension: the chat's LID beside its phone-number JID (1:1 chats), when the network told it"),
    from: z.string().describe('the phone-number JID when known, else the LID JID'),
    fromLid: z.string().nullable().describe("extension: the sender's LID, when the network told it"),
    fromMe: z.boolean(),
    type: z.string(),
    content: z.string(),
    pushName: z.string(),
    messageTimestamp: z.number(),
    receivedAt: dateTime,
    waMessageId: z.string().describe("extension: the network's id of the message, to react to it or quote it (quotedMessageId)"),
    media: z
      .object({
        mimetype: z.string(),
        size: z.number().int().describe('bytes of the decrypted file'),
        fileName: z.string().nullable().describe('as the sender named it; null when it gave none'),
        url: z
          .string()
          .describe(
            'GET it with x-api-key to download the file (for INCOMING_MEDIA_RETENTION_MS after it arrived): path-relative (/v1/...), or absolute when PUBLIC_URL is set',
          ),
      })
      .optional()
      .describe('extension: only on messages that carry a file (image, video, audio, voice note, document, sticker)')
      .meta({ id: 'IncomingMedia' }),
    waitingSince: dateTime
      .optional()
      .describe('extension: only on a message that first arrived undecryptable: when its message.waiting (same waMessageId) was raised'),
  })
  .meta({ id: 'IncomingMessage' });

/**
 * The busiest routes (sends and the incoming long-poll), mounted before every other group so a send
 * does not walk past the whole API first; none of their paths is claimed by another group.
 */
export const sendRoutes: Route[] = [
  // Before /sessions/:sessionId/send, which would otherwise read "api" as a session id.
  ...(['/sessions/api/send', '/whatsapp/send'] as const).map((path) =>
    route({
      method: 'post',
      path,
      summary: 'Shortcut: send a text with sessionId in the body',
      tag,
      body: shortcutSendSchema,
      response: sent,
      idempotent: true,
      handler: ({ ctx, body }) => sendTextShortcut(ctx, body),
    }),
  ),
  route({
    method: 'post',
    path: `${S}/send`,
    summary: 'Send a text',
    tag,
    body: sendSchema,
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendText(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/send-media`,
    summary: 'Send an image, video, audio or document fetched from a URL',
    tag,
    body: (settings) => mediaSchema(settings.MEDIA_ALLOW_PRIVATE),
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendMedia(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/send-interactive`,
    summary: 'Send buttons or a list',
    tag,
    body: interactiveSchema,
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendInteractive(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/rich`,
    summary: 'Send a document, contact card or location',
    tag,
    body: (settings) => richSchema(settings.MEDIA_ALLOW_PRIVATE),
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendRich(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/typing`,
    summary: 'Show typing, then send a text',
    tag,
    body: typingSchema,
    response: ok,
    idempotent: true,
    handler: ({ ctx, params, body }) => sendTyping(ctx, params.sessionId, body),
  }),
  route({
    method: 'get',
    path: `${S}/incoming`,
    summary: 'Incoming messages (long-poll with waitMs)',
    tag,
    query: incomingSchema,
    response: z.object({ count: z.number().int(), consumed: z.boolean(), items: z.array(incomingItem) }),
    handler: ({ ctx, params, query, signal }) => readIncoming(ctx, params.sessionId, query, signal),
  }),
];

export const messagesRoutes: Route[] = [
  route({
    method: 'get',
    path: `${S}/incoming/:messageId/media`,
    summary:
      "Download a received file (an incoming item's media.url): streamed decrypted, with its Content-Type, Content-Length and Content-Disposition. 404 when unknown or past the retention window (the message says it expired), 410 MEDIA_GONE when the network's media host no longer has it, 502 NETWORK_ERROR when the media host fails before the file starts; a failure midway cuts the body short of its Content-Length",
    tag,
    file: true,
    handler: ({ ctx, params }) => downloadIncomingMedia(ctx, params.sessionId, params.messageId),
  }),
  route({
    method: 'post',
    path: `${S}/messages/:messageId/edit`,
    summary: 'Edit a sent text',
    tag,
    body: editSchema,
    response: sent,
    idempotent: true,
    handler: ({ ctx, params, body }) => editMessage(ctx, params.sessionId, params.messageId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/:messageId/react`,
    summary:
      'Extension: react to a message this session sent (its record id) or received (its waMessageId) with an emoji; "" removes the reaction',
    tag,
    body: reactSchema,
    response: z.object({
      ok: z.literal(true),
      waMessageId: z.string().describe('the network id of the reaction itself'),
      emoji: z.string(),
      messageId: z.string().nullable().describe("the message reacted to: our record's id when we sent it, else null"),
      targetWaMessageId: z.string().describe('the network id of the message reacted to'),
    }),
    idempotent: true,
    handler: ({ ctx, params, body }) => reactToMessage(ctx, params.sessionId, params.messageId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/:messageId/delete`,
    summary:
      'Extension: delete a sent message for everyone; the record stays, with deletedAt (409 CONFLICT for a record that was never sent)',
    tag,
    response: z.object({ ok: z.literal(true), id: z.string(), deletedAt: dateTime }),
    idempotent: true,
    handler: ({ ctx, params }) => deleteMessage(ctx, params.sessionId, params.messageId),
  }),
  route({
    method: 'get',
    path: `${S}/messages`,
    summary: 'Outgoing message records, newest first',
    tag,
    query: historySchema,
    response: z.object({ count: z.number().int(), items: z.array(messageRecord) }),
    handler: ({ ctx, params, query }) => listMessages(ctx, params.sessionId, query),
  }),
  route({
    method: 'get',
    path: `${S}/messages/:messageId`,
    summary: 'One outgoing message record',
    tag,
    response: messageRecord,
    handler: ({ ctx, params }) => getMessage(ctx, params.sessionId, params.messageId),
  }),
  route({
    method: 'get',
    path: `${S}/messages/:messageId/receipts`,
    summary: 'Extension: who acknowledged a message (each group member; the recipient of a 1:1 message)',
    tag,
    response: z.object({ messageId: z.string(), count: z.number().int(), items: z.array(receipt) }),
    handler: ({ ctx, params }) => listReceipts(ctx, params.sessionId, params.messageId),
  }),
];
