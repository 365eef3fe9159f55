import { z } from 'zod';
import { eraseChat } from '../resolvers/retention.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const erased = z.object({ ok: z.literal(true), erased: z.number().int().describe('stored messages erased') }).meta({ id: 'ChatErased' });

export const retentionRoutes: Route[] = [
  route({
    method: 'delete',
    path: '/sessions/:sessionId/chats/:chatId/messages',
    summary:
      "Extension: erase a chat's stored messages (and its chat row and search entries); outgoing records stay, as the spec's routes serve them",
    tag: 'Conversations',
    response: erased,
    handler: ({ ctx, params }) => eraseChat(ctx, params.sessionId, { chatId: params.chatId }),
  }),
];
