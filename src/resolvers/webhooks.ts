import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { OutgoingMessage, Prisma, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../generated/sqlite/client.ts';
import type { OutboxEvent } from '../runtime/ports/webhooks.ts';
import type { Deps, RequestContext } from './context.ts';
import { notFound } from './errors.ts';
import { bySetting, publicUrlSchema } from './media-urls.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';

export const WEBHOOK_EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.failed',
  'message.delivered',
  'message.read',
  'message.reaction',
  'message.edited',
  'message.deleted',
  'poll.vote',
  'message.waiting',
  'presence.update',
  'call.received',
  'session.status',
  'session.health',
  'campaign.progress',
  'group.participants',
  'history.synced',
  'history.interrupted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** Sent only to the endpoint it was asked for, whatever its filter. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** How long the secret before a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 60 * 60 * 1000;

/** The event a message record's change gives to webhooks. */
export const messageEvent = (
  record: Pick<
    OutgoingMessage,
    | 'id'
    | 'accountId'
    | 'sessionId'
    | 'toNumber'
    | 'kind'
    | 'content'
    | 'status'
    | 'error'
    | 'waMessageId'
    | 'remoteJid'
    | 'toLid'
    | 'sentAt'
    | 'createdAt'
  >,
): OutboxEvent => ({
  accountId: record.accountId,
  sessionId: record.sessionId,
  type: record.status === 'SENT' ? 'message.sent' : 'message.failed',
  data: {
    messageId: record.id,
    sessionId: record.sessionId,
    to: record.toNumber,
    kind: record.kind,
    content: record.content,
    status: record.status,
    error: record.error,
    waMessageId: record.waMessageId,
    remoteJid: record.remoteJid,
    toLid: record.toLid,
    sentAt: record.sentAt?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
  },
});

/**
 * A change and the webhook events it causes, in one transaction: the events exist exactly when the change
 * does. Events no endpoint wants add nothing.
 */
export const writeWithEvents = async <T>(
  deps: Pick<Deps, 'db' | 'webhooks'>,
  change: Prisma.PrismaPromise<T>,
  events: OutboxEvent[],
): Promise<void> => {
  const rows = (await Promise.all(events.map((e) => deps.webhooks.rowsFor(e)))).filter((r) => r !== null);
  if (rows.length === 0) {
    await change;
    return;
  }
  await deps.db.$transaction([change, ...deps.webhooks.writes(rows)]);
  deps.webhooks.written(rows);
};

export const eventFilter = z
  .array(z.enum([...WEBHOOK_EVENT_TYPES, '*'], { message: `must be one of ${[...WEBHOOK_EVENT_TYPES, '*'].join(', ')}` }))
  .min(1, 'must name at least one event type, or "*"')
  .max(WEBHOOK_EVENT_TYPES.length + 1);

const webhookUrl = bySetting((allowPrivate) => publicUrlSchema('WEBHOOK_ALLOW_PRIVATE', allowPrivate));

export const createSchema = bySetting((allowPrivate) =>
  z.strictObject({
    url: webhookUrl(allowPrivate),
    events: eventFilter,
    sessionId: z.string().min(1).nullish(),
    description: z.string().max(200).nullish(),
    enabled: z.boolean().optional(),
  }),
);
export const updateSchema = bySetting((allowPrivate) =>
  z.strictObject({
    url: webhookUrl(allowPrivate).optional(),
    events: eventFilter.optional(),
    sessionId: z.string().min(1).nullish(),
    description: z.string().max(200).nullish(),
    enabled: z.boolean().optional(),
  }),
);
export const replaySchema = z
  .strictObject({
    eventId: z.string().min(1).optional(),
    since: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional(),
  })
  .refine((v) => (v.eventId === undefined) !== (v.since === undefined), { message: 'give exactly one of eventId or since' });
/** The states of one delivery (WebhookDeliveryStatus in GraphQL). */
export const deliveryStatusSchema = z.enum(['PENDING', 'DELIVERED', 'FAILED']);
export const listSchema = z.object({
  status: deliveryStatusSchema.optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .transform((n) => Math.min(n, 100))
    .default(20),
});

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  sessionId: string | null;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  /** until when the secret before the last rotation still signs */
  previousSecretValidUntil: string | null;
  createdAt: string;
  updatedAt: string;
}
export type WebhookWithSecret = WebhookView & { secret: string };

export interface WebhookDeliveryView {
  id: string;
  eventId: string;
  type: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  attemptLog: Array<{ statusCode: number | null; latencyMs: number; responseExcerpt: string | null; error: string | null; at: string }>;
}

/** Standard Webhooks secrets: `whsec_` and base64 of 24 to 64 random bytes. */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const view = (row: WebhookEndpoint, now: Date): WebhookView => ({
  id: row.id,
  url: row.url,
  events: JSON.parse(row.events) as string[],
  sessionId: row.sessionId,
  description: row.description,
  enabled: row.enabled,
  disabledReason: row.disabledReason,
  failingSince: row.failingSince?.toISOString() ?? null,
  previousSecretValidUntil: row.previousSecretUntil && row.previousSecretUntil > now ? row.previousSecretUntil.toISOString() : null,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const ownEndpoint = async (ctx: RequestContext, id: string): Promise<WebhookEndpoint> => {
  const row = await ctx.db.webhookEndpoint.findFirst({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Webhook');
  return row;
};

const changed = (ctx: RequestContext): void => {
  ctx.webhooks.invalidate(ctx.caller.accountId);
};

export const listWebhooks = async (ctx: RequestContext): Promise<WebhookView[]> => {
  const rows = await ctx.db.webhookEndpoint.findMany({ where: { accountId: ctx.caller.accountId }, orderBy: { createdAt: 'asc' } });
  return rows.map((r) => view(r, ctx.now()));
};

export const getWebhook = async (ctx: RequestContext, id: string): Promise<WebhookView> => view(await ownEndpoint(ctx, id), ctx.now());

export const createWebhook = async (ctx: RequestContext, input: unknown): Promise<WebhookWithSecret> => {
  const body = parseInput(createSchema(ctx.settings.WEBHOOK_ALLOW_PRIVATE), input);
  if (body.sessionId) await ownSession(ctx, body.sessionId);
  const secret = newSecret();
  const row = await ctx.db.webhookEndpoint.create({
    data: {
      accountId: ctx.caller.accountId,
      url: body.url,
      events: JSON.stringify([...new Set(body.events)]),
      sessionId: body.sessionId ?? null,
      description: body.description ?? null,
      enabled: body.enabled ?? true,
      secret,
    },
  });
  changed(ctx);
  return { ...view(row, ctx.now()), secret };
};

export const updateWebhook = async (ctx: RequestContext, id: string, input: unknown): Promise<WebhookView> => {
  const body = parseInput(updateSchema(ctx.settings.WEBHOOK_ALLOW_PRIVATE), input);
  await ownEndpoint(ctx, id);
  if (body.sessionId) await ownSession(ctx, body.sessionId);
  const row = await ctx.db.webhookEndpoint.update({
    where: { id },
    data: {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.events !== undefined ? { events: JSON.stringify([...new Set(body.events)]) } : {}),
      ...(body.sessionId !== undefined ? { sessionId: body.sessionId } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      // Turning an endpoint back on starts its failure count afresh.
      ...(body.enabled === true ? { enabled: true, disabledReason: null, failingSince: null } : {}),
      ...(body.enabled === false ? { enabled: false, disabledReason: 'Disabled by the account' } : {}),
    },
  });
  changed(ctx);
  return view(row, ctx.now());
};

export const deleteWebhook = async (ctx: RequestContext, id: string): Promise<{ ok: true }> => {
  await ownEndpoint(ctx, id);
  await ctx.db.$transaction([
    ctx.db.webhookDelivery.deleteMany({ where: { endpointId: id } }),
    ctx.db.webhookAttempt.deleteMany({ where: { endpointId: id } }),
    ctx.db.webhookEndpoint.delete({ where: { id } }),
  ]);
  changed(ctx);
  return { ok: true };
};

/** A new secret; the old one keeps signing beside it for 24 hours so receivers can switch without a gap. */
export const rotateWebhookSecret = async (ctx: RequestContext, id: string): Promise<WebhookWithSecret> => {
  const old = await ownEndpoint(ctx, id);
  const secret = newSecret();
  const row = await ctx.db.webhookEndpoint.update({
    where: { id },
    data: { secret, previousSecret: old.secret, previousSecretUntil: new Date(ctx.now().getTime() + PREVIOUS_SECRET_VALID_MS) },
  });
  // The delivery loop trusts an endpoint it read for a second: the next event must be signed with the new secret.
  changed(ctx);
  return { ...view(row, ctx.now()), secret };
};

type AttemptView = WebhookDeliveryView['attemptLog'][number];

const attemptView = (a: WebhookAttempt): AttemptView => ({
  statusCode: a.statusCode,
  latencyMs: a.latencyMs,
  responseExcerpt: a.responseExcerpt,
  error: a.error,
  at: a.at.toISOString(),
});

/** The success a delivery records on itself, if any (a delivery delivered before that was recorded has its success as a log row). */
const successOf = (row: WebhookDelivery): AttemptView[] =>
  row.status === 'DELIVERED' && row.deliveredAt && row.successLatencyMs !== null
    ? [
        {
          statusCode: row.lastStatus,
          latencyMs: row.successLatencyMs,
          responseExcerpt: row.successExcerpt,
          error: null,
          at: row.deliveredAt.toISOString(),
        },
      ]
    : [];

const deliveryView = (row: WebhookDelivery, attempts: WebhookAttempt[]): WebhookDeliveryView => ({
  id: row.id,
  eventId: row.eventId,
  type: row.type,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.status === 'PENDING' ? row.nextAttemptAt.toISOString() : null,
  lastStatus: row.lastStatus,
  lastError: row.lastError,
  deliveredAt: row.deliveredAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
  attemptLog: [...attempts.map(attemptView), ...successOf(row)],
});

/** The delivery log of one endpoint, newest first, each with its attempts. */
export const listWebhookDeliveries = async (ctx: RequestContext, id: string, input: unknown): Promise<WebhookDeliveryView[]> => {
  const query = parseInput(listSchema, input);
  await ownEndpoint(ctx, id);
  const rows = await ctx.db.webhookDelivery.findMany({
    where: { endpointId: id, ...(query.status ? { status: query.status } : {}) },
    orderBy: [{ createdAt: 'desc' }, { eventId: 'desc' }],
    take: query.limit,
  });
  const attempts = await ctx.db.webhookAttempt.findMany({ where: { deliveryId: { in: rows.map((r) => r.id) } }, orderBy: { at: 'asc' } });
  return rows.map((r) =>
    deliveryView(
      r,
      attempts.filter((a) => a.deliveryId === r.id),
    ),
  );
};

/**
 * Sends again one event, or every failed delivery since a time. The event keeps its id, so a receiver
 * that already has it can tell.
 */
export const replayWebhook = async (ctx: RequestContext, id: string, input: unknown): Promise<{ ok: true; replayed: number }> => {
  const body = parseInput(replaySchema, input);
  const endpoint = await ownEndpoint(ctx, id);
  const now = ctx.now();
  const again = {
    status: 'PENDING',
    nextAttemptAt: now,
    claimedUntil: null,
    lastError: null,
    successLatencyMs: null,
    successExcerpt: null,
  };
  let replayed: number;
  if (body.eventId !== undefined) {
    // the event as any endpoint of the account got it: this one may not have wanted it then
    const event = await ctx.db.webhookDelivery.findFirst({ where: { eventId: body.eventId, accountId: ctx.caller.accountId } });
    if (!event) throw notFound('Event');
    const id = `${event.eventId}_${endpoint.id}`;
    const earlier = await ctx.db.webhookDelivery.findUnique({ where: { id } });
    const [success] = earlier ? successOf(earlier) : [];
    await ctx.db.$transaction([
      // the success recorded on the delivery joins its log before the delivery starts again
      ...(success
        ? [
            ctx.db.webhookAttempt.create({
              data: {
                deliveryId: id,
                endpointId: endpoint.id,
                eventId: event.eventId,
                statusCode: success.statusCode,
                latencyMs: success.latencyMs,
                responseExcerpt: success.responseExcerpt,
                at: new Date(success.at),
              },
            }),
          ]
        : []),
      ctx.db.webhookDelivery.upsert({
        where: { id },
        create: {
          id,
          eventId: event.eventId,
          type: event.type,
          data: event.data,
          endpointId: endpoint.id,
          accountId: endpoint.accountId,
          sessionId: event.sessionId,
          nextAttemptAt: now,
          createdAt: event.createdAt,
        },
        update: again,
      }),
    ]);
    replayed = 1;
  } else {
    const since = new Date(body.since ?? 0);
    replayed = (
      await ctx.db.webhookDelivery.updateMany({
        where: { endpointId: endpoint.id, status: 'FAILED', createdAt: { gte: since } },
        data: again,
      })
    ).count;
  }
  ctx.webhooks.written();
  return { ok: true, replayed };
};

/** A `webhook.test` event for this endpoint only, through the same outbox and signing as every other. */
export const sendTestWebhook = async (ctx: RequestContext, id: string): Promise<{ ok: true; eventId: string }> => {
  const endpoint = await ownEndpoint(ctx, id);
  const rows = await ctx.webhooks.rowsFor(
    {
      accountId: endpoint.accountId,
      sessionId: null,
      type: TEST_EVENT_TYPE,
      data: { webhookId: endpoint.id, message: 'This is a test event' },
    },
    [{ id: endpoint.id, events: [TEST_EVENT_TYPE], sessionId: null }],
  );
  if (!rows) throw new Error('no rows for a test event');
  await ctx.db.$transaction(ctx.webhooks.writes([rows]));
  ctx.webhooks.written([rows]);
  return { ok: true, eventId: rows.event.id };
};
