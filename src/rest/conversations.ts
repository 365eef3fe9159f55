import { z } from 'zod';
import {
  CHAT_KINDS,
  chatMessagesQuerySchema,
  chatsQuerySchema,
  getStoredMessage,
  listChatMessages,
  listChats,
} from '../resolvers/conversations.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Conversations';
const S = '/sessions/:sessionId';

const date = z.string().describe('ISO 8601 date-time');
const nullableDate = z.string().nullable().describe('ISO 8601 date-time');

const receipt = z.object({
  recipient: z.string().describe('the phone-number JID when known, else the LID JID'),
  recipientLid: z.string().nullable(),
  deliveredAt: nullableDate,
  readAt: nullableDate,
  playedAt: nullableDate,
});

const storedMessageFields = {
  id: z.string().describe("our id; for a message this API sent, its outgoing record's id"),
  waMessageId: z.string().describe("the network's id"),
  direction: z.enum(['in', 'out']).describe('in: received; out: sent by this API, or from the phone or another device of the account'),
  chatId: z.string(),
  chatLid: z.string().nullable(),
  sender: z.string().describe('the phone-number JID when known, else the LID JID'),
  senderLid: z.string().nullable(),
  fromMe: z.boolean(),
  kind: z.string().describe('text, image, video, audio, document, sticker, location, contact, poll...'),
  text: z.string().nullable().describe('the text or caption; null after a delete for everyone'),
  quotedId: z.string().nullable().describe('a reply: the network id of the message it quotes'),
  mentions: z.array(z.string()),
  timestamp: date.describe("the network's time of the message"),
  editedText: z.string().nullable().describe('the latest edit'),
  editedAt: nullableDate,
  deletedAt: nullableDate.describe('deleted for everyone'),
  source: z.string().describe('live, or history'),
  media: z
    .object({ mimetype: z.string(), size: z.number().int(), fileName: z.string().nullable(), url: z.string() })
    .nullable()
    .describe('a received file while its record is kept (INCOMING_MEDIA_RETENTION_MS); GET on url with the key streams it'),
  reactions: z.array(z.object({ reactor: z.string(), reactorLid: z.string().nullable(), emoji: z.string(), reactedAt: date })),
  receipts: z
    .object({
      messageId: z.string().describe('the outgoing record'),
      status: z.string(),
      deliveredAt: nullableDate,
      readAt: nullableDate,
      playedAt: nullableDate,
      recipients: z.array(receipt).describe('per group member; empty for a 1:1 message'),
    })
    .nullable()
    .describe('for a message this API sent; null otherwise'),
};

const quoted = z.object({ ...storedMessageFields, quoted: z.null() });

const storedMessage = z
  .object({
    ...storedMessageFields,
    quoted: quoted.nullable().describe('the quoted message when the store holds it (its own quoted is null)'),
  })
  .meta({ id: 'StoredMessage' });

const chat = z
  .object({
    sessionId: z.string(),
    id: z.string().describe("the chat's JID: a person's phone-number JID where known (else LID), a group, a channel"),
    lid: z.string().nullable(),
    kind: z.enum(CHAT_KINDS),
    name: z.string().nullable().describe("the account's saved contact name, else the person's push name"),
    lastMessage: storedMessage.nullable(),
    lastActivity: date,
    unreadCount: z.number().int(),
    lastReadAt: nullableDate,
    archived: z.boolean().describe('archived on a device of the account (app state, once the link has synced it)'),
    pinned: z.boolean().describe('pinned on a device of the account (app state, once the link has synced it)'),
    muted: z.boolean().describe('muted on a device of the account, when the change came (app state, once the link has synced it)'),
  })
  .meta({ id: 'Chat' });

const nextCursor = z.string().nullable().describe('give it as `cursor` for the next page; null on the last page');

/**
 * Reading the message store (docs/conversations.md). The spec's `/messages` routes are the outgoing
 * records; a stored message of either direction is under `/stored-messages` so no path of the spec is taken.
 */
export const conversationsRoutes: Route[] = [
  route({
    method: 'get',
    path: `${S}/chats`,
    summary: "Extension: the session's chats, latest activity first (filters: unread, archived, kind), paged by cursor",
    tag,
    query: chatsQuerySchema,
    response: z.object({ chats: z.array(chat), nextCursor }).meta({ id: 'ChatsPage' }),
    handler: ({ ctx, params, query }) => listChats(ctx, params.sessionId, query),
  }),
  route({
    method: 'get',
    path: `${S}/chats/:chatId/messages`,
    summary: "Extension: a chat's stored messages, both directions, newest first (before / after a time), paged by cursor",
    tag,
    query: chatMessagesQuerySchema,
    response: z.object({ messages: z.array(storedMessage), nextCursor }).meta({ id: 'StoredMessagesPage' }),
    handler: ({ ctx, params, query }) => listChatMessages(ctx, params.sessionId, params.chatId, query),
  }),
  route({
    method: 'get',
    path: `${S}/stored-messages/:messageId`,
    summary: 'Extension: any stored message, in or out, by our id or its network id',
    tag,
    response: storedMessage,
    handler: ({ ctx, params }) => getStoredMessage(ctx, params.sessionId, params.messageId),
  }),
];
