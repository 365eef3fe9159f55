import { z } from 'zod';
import { searchMessages } from '../resolvers/message-search.ts';
import { dateTime } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const found = z
  .object({
    id: z.string().describe('the stored message (a message this API sent: its record id)'),
    waMessageId: z.string(),
    chatId: z.string(),
    chatLid: z.string().nullable(),
    direction: z.enum(['in', 'out']),
    fromMe: z.boolean(),
    sender: z.string(),
    senderLid: z.string().nullable(),
    kind: z.string(),
    text: z.string().nullable().describe('the latest text or caption (the edit when there is one)'),
    editedAt: dateTime.nullable(),
    timestamp: dateTime.describe("the network's time of the message"),
    outgoingId: z.string().nullable().describe('the outgoing record of a message this API sent'),
  })
  .meta({ id: 'FoundMessage' });

const page = z
  .object({
    ok: z.literal(true),
    items: z.array(found),
    total: z.number().int().describe('messages matching, on every page'),
    limit: z.number().int(),
    nextCursor: z.string().nullable().describe("the next page's cursor; null on the last page"),
  })
  .meta({ id: 'MessageSearchPage' });

const query = z.object({
  q: z.string().describe('words to find, each as a word or the start of one (all must match); 1-200 characters, at most 16 words'),
  chatId: z.string().optional().describe('only this chat (its JID, as stored messages name it)'),
  from: dateTime.optional().describe('only messages at or after this time'),
  to: dateTime.optional().describe('only messages before this time'),
  limit: z.string().optional().describe('page size (default 50, max 200)'),
  cursor: z.string().optional().describe("a previous page's nextCursor"),
});

export const messageSearchRoutes: Route[] = [
  route({
    method: 'get',
    path: '/sessions/:sessionId/search',
    summary: "Extension: search the session's stored messages by their latest text, newest first, paged with cursors",
    tag: 'Conversations',
    query,
    response: page,
    handler: ({ ctx, params, query }) => searchMessages(ctx, params.sessionId, query),
  }),
];
