import { z } from 'zod';
import {
  createSchema,
  createWebhook,
  deleteWebhook,
  getWebhook,
  listSchema,
  listWebhookDeliveries,
  listWebhooks,
  replaySchema,
  replayWebhook,
  rotateWebhookSecret,
  sendTestWebhook,
  updateSchema,
  updateWebhook,
} from '../resolvers/webhooks.ts';
import { dateTime, ok } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Webhooks';
const W = '/webhooks/:webhookId';

const webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    sessionId: z.string().nullable(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable(),
    failingSince: dateTime.nullable(),
    previousSecretValidUntil: dateTime.nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'Webhook' });
const webhookWithSecret = webhook.extend({ secret: z.string().describe('whsec_ and base64; shown only on create and rotate') });
const webhookDelivery = z.object({
  id: z.string(),
  eventId: z.string(),
  type: z.string(),
  status: z.string(),
  attempts: z.number().int(),
  nextAttemptAt: dateTime.nullable(),
  lastStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: dateTime.nullable(),
  createdAt: dateTime,
  attemptLog: z.array(
    z.object({
      statusCode: z.number().int().nullable(),
      latencyMs: z.number(),
      responseExcerpt: z.string().nullable(),
      error: z.string().nullable(),
      at: dateTime,
    }),
  ),
});

export const webhooksRoutes: Route[] = [
  route({
    method: 'get',
    path: '/webhooks',
    summary: "Extension: the account's webhook endpoints",
    tag,
    response: z.array(webhook),
    handler: ({ ctx }) => listWebhooks(ctx),
  }),
  route({
    method: 'post',
    path: '/webhooks',
    summary: 'Extension: add a webhook endpoint (the secret is shown once)',
    tag,
    body: (settings) => createSchema(settings.WEBHOOK_ALLOW_PRIVATE),
    response: webhookWithSecret,
    status: 201,
    handler: ({ ctx, body }) => createWebhook(ctx, body),
  }),
  route({
    method: 'get',
    path: W,
    summary: 'Extension: one webhook endpoint',
    tag,
    response: webhook,
    handler: ({ ctx, params }) => getWebhook(ctx, params.webhookId),
  }),
  route({
    method: 'patch',
    path: W,
    summary: 'Extension: change a webhook endpoint',
    tag,
    body: (settings) => updateSchema(settings.WEBHOOK_ALLOW_PRIVATE),
    response: webhook,
    handler: ({ ctx, params, body }) => updateWebhook(ctx, params.webhookId, body),
  }),
  route({
    method: 'delete',
    path: W,
    summary: 'Extension: remove a webhook endpoint',
    tag,
    response: ok,
    handler: ({ ctx, params }) => deleteWebhook(ctx, params.webhookId),
  }),
  route({
    method: 'post',
    path: `${W}/rotate-secret`,
    summary: 'Extension: a new secret (the old one signs too for 24 h)',
    tag,
    response: webhookWithSecret,
    handler: ({ ctx, params }) => rotateWebhookSecret(ctx, params.webhookId),
  }),
  route({
    method: 'get',
    path: `${W}/deliveries`,
    summary: "Extension: an endpoint's deliveries with their attempts",
    tag,
    query: listSchema,
    response: z.array(webhookDelivery),
    handler: ({ ctx, params, query }) => listWebhookDeliveries(ctx, params.webhookId, query),
  }),
  route({
    method: 'post',
    path: `${W}/replay`,
    summary: 'Extension: deliver one event again, or every failed one since a time',
    tag,
    body: replaySchema,
    response: z.object({ ok: z.literal(true), replayed: z.number().int() }),
    handler: ({ ctx, params, body }) => replayWebhook(ctx, params.webhookId, body),
  }),
  route({
    method: 'post',
    path: `${W}/test`,
    summary: 'Extension: send a test event',
    tag,
    response: z.object({ ok: z.literal(true), eventId: z.string() }),
    handler: ({ ctx, params }) => sendTestWebhook(ctx, params.webhookId),
  }),
];
