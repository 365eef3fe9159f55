import { z } from 'zod';
import { fetchChatHistory, fetchHistorySchema } from '../resolvers/history.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const asked = z
  .object({
    ok: z.literal(true),
    chatId: z.string(),
    requestId: z.string().describe("the request's network id: the history.synced event (syncType on_demand) that answers it carries it"),
    count: z.number().int(),
    before: z.string().describe('the oldest stored message of the chat, which the phone pages back from'),
  })
  .meta({ id: 'FetchHistoryResult' });

export const historyRoutes: Route[] = [
  route({
    method: 'post',
    path: '/sessions/:sessionId/chats/:chatId/history',
    summary:
      'Extension: ask the phone for up to count (1-500, default 50) messages of a chat older than the oldest stored; they arrive later as history, with a history.synced event',
    tag: 'Conversations',
    body: fetchHistorySchema,
    response: asked,
    handler: ({ ctx, params, body }) => fetchChatHistory(ctx, params.sessionId, params.chatId, body),
  }),
];
