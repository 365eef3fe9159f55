import {
  recurringSchema,
  scheduleSchema,
  scheduleStatus,
  sendStatus,
  startRecurringStatus,
  statusPayloadSchema,
} from '../resolvers/statuses.ts';
import { object } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Statuses';
const S = '/sessions/:sessionId';

export const statusesRoutes: Route[] = [
  route({
    method: 'post',
    path: `${S}/status/send`,
    summary: 'Publish a status',
    tag,
    body: (settings) => statusPayloadSchema(settings.MEDIA_ALLOW_PRIVATE),
    response: object('`{ok, accepted, messageId, ...}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => sendStatus(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/status/schedule`,
    summary: 'Publish a status later',
    tag,
    body: (settings) => scheduleSchema(settings.MEDIA_ALLOW_PRIVATE),
    response: object('`{ok, scheduledInMs}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => scheduleStatus(ctx, params.sessionId, body),
  }),
  route({
    method: 'post',
    path: `${S}/status/recurring`,
    summary: 'Publish a status every everyMs',
    tag,
    body: (settings) => recurringSchema(settings.RECURRING_MIN_MS, settings.MEDIA_ALLOW_PRIVATE),
    response: object('`{ok, recurringEveryMs, timerId}`'),
    idempotent: true,
    handler: ({ ctx, params, body }) => startRecurringStatus(ctx, params.sessionId, body),
  }),
];
