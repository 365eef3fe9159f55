import { z } from 'zod';
import { cancelRecurring, listRecurring } from '../resolvers/recurring.ts';
import {
  campaignSchema,
  recurringSchema,
  scheduleMessage,
  scheduleSchema,
  sendVariation,
  startCampaign,
  startRecurring,
  variationsSchema,
} from '../resolvers/scheduling.ts';
import { dateTime, object, ok } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Scheduling';
const S = '/sessions/:sessionId';

const scheduled = z.object({ ok: z.literal(true), scheduledInMs: z.number(), sendAt: dateTime, messageId: z.string(), jobId: z.string() });
const recurring = z.object({
  timerId: z.string(),
  sessionId: z.string(),
  to: z.string(),
  message: z.string(),
  everyMs: z.number(),
  createdAt: dateTime,
});

/** Mounted before the messages routes, so `messages/recurring` is not read as a message id. */
export const schedulingRoutes: Route[] = [
  route({
    method: 'post',
    path: `${S}/messages/campaign`,
    summary: 'Send a template to many contacts, paced',
    tag,
    body: campaignSchema,
    response: object('`{ok, campaignId, total, ...}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => startCampaign(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/bulk-send`,
    summary: 'Alias of campaign',
    tag,
    body: campaignSchema,
    response: object('as campaign'),
    idempotent: true,
    handler: ({ ctx, params, body }) => startCampaign(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/variations`,
    summary: 'Send one of several texts',
    tag,
    body: variationsSchema,
    response: object('`{ok, id, chosen...}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => sendVariation(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/schedule`,
    summary: 'Schedule a text',
    tag,
    body: scheduleSchema,
    response: scheduled,
    idempotent: true,
    handler: ({ ctx, params, body }) => scheduleMessage(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/messages/recurring`,
    summary: 'Send a text every everyMs',
    tag,
    body: (settings) => recurringSchema(settings.RECURRING_MIN_MS),
    response: object('`{ok, recurringEveryMs, timerId}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => startRecurring(ctx, params.sessionId, body),
  }),
  route({
    method: 'get',
    path: `${S}/messages/recurring`,
    summary: "Extension: the session's recurring timers",
    tag,
    response: z.object({ count: z.number().int(), items: z.array(recurring) }),
    handler: ({ ctx, params }) => listRecurring(ctx, params.sessionId),
  }),
  route({
    method: 'delete',
    path: `${S}/messages/recurring/:timerId`,
    summary: 'Extension: cancel a recurring timer',
    tag,
    response: ok,
    handler: ({ ctx, params }) => cancelRecurring(ctx, params.sessionId, params.timerId),
  }),
];
