import type { WebhookDeliveryView, WebhookView, WebhookWithSecret } from '../resolvers/webhooks.ts';
import {
  createWebhook,
  deliveryStatusSchema,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhook,
  rotateWebhookSecret,
  sendTestWebhook,
  updateWebhook,
} from '../resolvers/webhooks.ts';
import { builder, dateOf, dateOrNull } from './builder.ts';

const WebhookDeliveryStatus = builder.enumType('WebhookDeliveryStatus', { values: deliveryStatusSchema.options });

const WebhookRef = builder.objectRef<WebhookView>('Webhook').implement({
  description: "An endpoint that receives this account's events, signed per Standard Webhooks.",
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    events: t.exposeStringList('events'),
    sessionId: t.exposeString('sessionId', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    enabled: t.exposeBoolean('enabled'),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
    failingSince: t.field({ type: 'DateTime', nullable: true, resolve: (v) => dateOrNull(v.failingSince) }),
    previousSecretValidUntil: t.field({ type: 'DateTime', nullable: true, resolve: (v) => dateOrNull(v.previousSecretValidUntil) }),
    createdAt: t.field({ type: 'DateTime', resolve: (v) => dateOf(v.createdAt) }),
    updatedAt: t.field({ type: 'DateTime', resolve: (v) => dateOf(v.updatedAt) }),
  }),
});

const WebhookWithSecretRef = builder.objectRef<WebhookWithSecret>('WebhookWithSecret').implement({
  description: 'A webhook with its signing secret, shown only when it is created or rotated.',
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, resolve: (w) => w }),
    secret: t.exposeString('secret'),
  }),
});

const WebhookAttemptRef = builder.objectRef<WebhookDeliveryView['attemptLog'][number]>('WebhookAttempt').implement({
  fields: (t) => ({
    statusCode: t.exposeInt('statusCode', { nullable: true }),
    latencyMs: t.exposeInt('latencyMs'),
    responseExcerpt: t.exposeString('responseExcerpt', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    at: t.field({ type: 'DateTime', resolve: (v) => dateOf(v.at) }),
  }),
});

const WebhookDeliveryRef = builder.objectRef<WebhookDeliveryView>('WebhookDelivery').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeString('eventId'),
    type: t.exposeString('type'),
    status: t.field({ type: WebhookDeliveryStatus, resolve: (d) => deliveryStatusSchema.parse(d.status) }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (v) => dateOrNull(v.nextAttemptAt) }),
    lastStatus: t.exposeInt('lastStatus', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (v) => dateOrNull(v.deliveredAt) }),
    createdAt: t.field({ type: 'DateTime', resolve: (v) => dateOf(v.createdAt) }),
    attemptLog: t.field({ type: [WebhookAttemptRef], resolve: (d) => d.attemptLog }),
  }),
});

builder.queryFields((t) => ({
  webhooks: t.field({ type: [WebhookRef], resolve: (_root, _args, ctx) => listWebhooks(ctx) }),
  webhook: t.field({
    type: WebhookRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getWebhook(ctx, String(args.id)),
  }),
  webhookDeliveries: t.field({
    type: [WebhookDeliveryRef],
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: WebhookDeliveryStatus }), limit: t.arg.int() },
    resolve: (_root, args, ctx) =>
      listWebhookDeliveries(ctx, String(args.id), { status: args.status ?? undefined, limit: args.limit ?? undefined }),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: WebhookWithSecretRef,
    args: {
      url: t.arg.string({ required: true }),
      events: t.arg.stringList({ required: true }),
      sessionId: t.arg.id(),
      description: t.arg.string(),
      enabled: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      createWebhook(ctx, {
        url: args.url,
        events: args.events,
        sessionId: args.sessionId ?? undefined,
        description: args.description ?? undefined,
        enabled: args.enabled ?? undefined,
      }),
  }),
  updateWebhook: t.field({
    type: WebhookRef,
    args: {
      id: t.arg.id({ required: true }),
      url: t.arg.string(),
      events: t.arg.stringList(),
      sessionId: t.arg.id(),
      description: t.arg.string(),
      enabled: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      updateWebhook(ctx, String(args.id), {
        url: args.url ?? undefined,
        events: args.events ?? undefined,
        // null clears the session filter; leaving the argument out keeps it
        sessionId: args.sessionId === null ? null : args.sessionId === undefined ? undefined : String(args.sessionId),
        description: args.description ?? undefined,
        enabled: args.enabled ?? undefined,
      }),
  }),
  deleteWebhook: t.field({
    type: 'Boolean',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteWebhook(ctx, String(args.id))).ok,
  }),
  rotateWebhookSecret: t.field({
    type: WebhookWithSecretRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => rotateWebhookSecret(ctx, String(args.id)),
  }),
  replayWebhook: t.field({
    type: 'Int',
    description: 'Sends again one event (eventId) or every failed delivery since a time (since); answers how many.',
    args: { id: t.arg.id({ required: true }), eventId: t.arg.string(), since: t.arg({ type: 'DateTime' }) },
    resolve: async (_root, args, ctx) =>
      (await replayWebhook(ctx, String(args.id), { eventId: args.eventId ?? undefined, since: args.since?.toISOString() })).replayed,
  }),
  sendTestWebhook: t.field({
    type: 'String',
    description: 'Queues a webhook.test event for this endpoint; answers its event id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await sendTestWebhook(ctx, String(args.id))).eventId,
  }),
}));
