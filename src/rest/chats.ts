import { z } from 'zod';
import {
  checkNumbers,
  getSessionSettings,
  markChatRead,
  markReadSchema,
  numbersCheckSchema,
  ownPresenceSchema,
  pictureQuerySchema,
  profilePicture,
  sessionSettingsSchema,
  setOwnPresence,
  subscribePresence,
  updateSessionSettings,
} from '../resolvers/chats.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Chats';
const S = '/sessions/:sessionId';

const settings = z
  .object({
    ok: z.literal(true),
    settings: z.object({
      sendReadReceipts: z.boolean().describe('read marks send read receipts (off by default: they tell the sender you looked)'),
      ignoreGroups: z.boolean().describe('drop received group messages'),
      ignoreStatuses: z.boolean().describe('drop received statuses (status@broadcast)'),
      ignoreBroadcasts: z.boolean().describe('drop messages received through broadcast lists'),
      ignoreChannels: z.boolean().describe('drop received channel (newsletter) posts'),
      rejectCalls: z.boolean().describe('reject incoming calls'),
      rejectCallsMessage: z.string().nullable().describe('text sent to a caller whose call was rejected'),
      sendIntervalMs: z.number().int().nullable().describe('least time between two sends; null = the PACING_INTERVAL_MS default'),
      sendJitterMs: z.number().int().nullable().describe('random extra wait added to each interval; null = PACING_JITTER_MS'),
      perChatIntervalMs: z.number().int().nullable().describe('least time between two sends to one chat; null = PACING_PER_CHAT_MS'),
      typingMsPerChar: z
        .number()
        .int()
        .nullable()
        .describe('"typing…" shown before each text, per character; null = PACING_TYPING_MS_PER_CHAR'),
      warmup: z
        .boolean()
        .nullable()
        .describe("a newly linked number's sends are capped per day for its first days (PACING_WARMUP_CAPS); null = the account's choice"),
    }),
  })
  .meta({ id: 'SessionSettings' });

const numbers = z
  .object({
    ok: z.literal(true),
    numbers: z.array(
      z.object({
        number: z.string().describe('the number asked about, digits'),
        onWhatsApp: z.boolean(),
        jid: z.string().nullable().describe('its JID, null when not on WhatsApp'),
        lid: z.string().nullable().describe('its LID, when the network told it'),
      }),
    ),
  })
  .meta({ id: 'NumbersCheck' });

const read = z
  .object({
    ok: z.literal(true),
    chatId: z.string(),
    read: z.array(z.string()).describe('network ids of the messages marked read'),
    unknown: z.array(z.string()).describe('ids given that could not be marked (group messages this link has not seen)'),
  })
  .meta({ id: 'MarkReadAnswer' });

const picture = z
  .object({
    ok: z.literal(true),
    chatId: z.string().describe('the person or group, as a JID'),
    url: z
      .string()
      .nullable()
      .describe('the picture on the network media host (the link expires); null when there is none or its owner hides it'),
  })
  .meta({ id: 'ProfilePicture' });

export const chatsRoutes: Route[] = [
  route({
    method: 'get',
    path: `${S}/settings`,
    summary: "Extension: the session's settings (read receipts, ignore filters, call rejection, send pacing)",
    tag,
    response: settings,
    handler: ({ ctx, params }) => getSessionSettings(ctx, params.sessionId),
  }),
  route({
    method: 'patch',
    path: `${S}/settings`,
    summary: "Extension: change the session's settings (those given; the others are kept)",
    tag,
    body: sessionSettingsSchema,
    response: settings,
    handler: ({ ctx, params, body }) => updateSessionSettings(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/numbers/check`,
    summary: 'Extension: which of up to 50 numbers are on WhatsApp, with their JID and LID',
    tag,
    body: numbersCheckSchema,
    response: numbers,
    handler: ({ ctx, params, body }) => checkNumbers(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/chats/:chatId/read`,
    summary: 'Extension: mark received messages of a chat read (needs the sendReadReceipts setting)',
    tag,
    body: markReadSchema,
    response: read,
    handler: ({ ctx, params, body }) => markChatRead(ctx, params.sessionId, params.chatId, body),
  }),
  route({
    method: 'get',
    path: `${S}/chats/:chatId/picture`,
    summary: "Extension: the URL of a person's or group's profile picture (null when none or hidden)",
    tag,
    query: pictureQuerySchema,
    response: picture,
    handler: ({ ctx, params, query }) => profilePicture(ctx, params.sessionId, params.chatId, query),
  }),
  route({
    method: 'post',
    path: `${S}/presence/:chatId/subscribe`,
    summary: "Extension: receive a contact's presence (online, typing, recording) as presence.update events",
    tag,
    response: z.object({ ok: z.literal(true), chatId: z.string() }),
    handler: ({ ctx, params }) => subscribePresence(ctx, params.sessionId, params.chatId),
  }),
  route({
    method: 'post',
    path: `${S}/presence`,
    summary: 'Extension: set our own presence (available or unavailable)',
    tag,
    body: ownPresenceSchema,
    response: z.object({ ok: z.literal(true), presence: z.enum(['available', 'unavailable']) }),
    handler: ({ ctx, params, body }) => setOwnPresence(ctx, params.sessionId, body),
  }),
];
