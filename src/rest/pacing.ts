import { z } from 'zod';
import { sessionHealth } from '../resolvers/pacing.ts';
import { messageView } from '../resolvers/messages.ts';
import { cancelQueued, listQueue, queueSchema } from '../resolvers/queue.ts';
import { dateTime } from './answers.ts';
import { messageRecord } from './messages.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Send pacing';
const S = '/sessions/:sessionId';

const health = z
  .object({
    sessionId: z.string(),
    state: z.enum(['ok', 'paused', 'restricted', 'banned']).describe('paused: after rate answers, until pausedUntil'),
    reason: z.string().nullable().describe('what the network answered'),
    pausedUntil: dateTime.nullable(),
    rateAnswers: z.number().int().describe('rate-overlimit answers received since the process started'),
    queueLength: z.number().int().describe('PENDING records of the session, scheduled ones included'),
    at: dateTime,
  })
  .meta({ id: 'SessionHealth' });

export const pacingRoutes: Route[] = [
  route({
    method: 'get',
    path: `${S}/queue`,
    summary: "Extension: the session's send queue (PENDING records, in the order they go, each with its sendAt)",
    tag,
    query: queueSchema,
    response: z.object({ ok: z.literal(true), count: z.number().int(), items: z.array(messageRecord) }),
    handler: ({ ctx, params, query }) => listQueue(ctx, params.sessionId, query),
  }),
  route({
    method: 'delete',
    path: `${S}/queue/:messageId`,
    summary: 'Extension: cancel a queued message (it becomes FAILED, its quota unit given back); 409 once it is being sent',
    tag,
    response: z.object({ ok: z.literal(true), message: messageRecord }),
    handler: async ({ ctx, params }) => ({
      ok: true as const,
      message: messageView(await cancelQueued(ctx, params.sessionId, params.messageId)),
    }),
  }),
  route({
    method: 'get',
    path: `${S}/health`,
    summary: "Extension: the session's sending health (paused after rate answers, restricted, banned) and queue length",
    tag,
    response: z.object({ ok: z.literal(true), health }),
    handler: ({ ctx, params }) => sessionHealth(ctx, params.sessionId),
  }),
];
