import { z } from 'zod';
import type { EventSink } from '../generated/sqlite/client.ts';
import type { RequestContext } from './context.ts';
import { notFound, validationFailed } from './errors.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';
import { eventFilter } from './webhooks.ts';

export const SINK_KINDS = ['amqp', 'nats'] as const;
export type SinkKind = (typeof SINK_KINDS)[number];
const SCHEMES: Record<SinkKind, string[]> = { amqp: ['amqp:', 'amqps:'], nats: ['nats:', 'tls:'] };

const brokerUrl = z
  .string()
  .max(2048)
  .refine((v) => URL.canParse(v) && new URL(v).hostname !== '', 'must be an absolute URL with a host');
/** AMQP 0-9-1 exchange names: letters, digits, hyphen, underscore, period, colon; not the default exchange (""), not amq.* */
const exchangeName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9_.:-]+$/, 'may hold only letters, digits and - _ . :')
  .refine((v) => !v.startsWith('amq.'), 'must not start with amq. (reserved by the broker)');
/** JetStream stream names: no spaces, dots, wildcards or path separators */
const streamName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9_-]+$/, 'may hold only letters, digits, - and _');
/** NATS subject tokens, without wildcards: the subjects are `<prefix>.<account>.<session>.<event type>` */
const subjectPrefix = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated tokens of letters, digits, - and _ (no wildcards)');

const common = {
  events: eventFilter,
  sessionId: z.string().min(1).nullish(),
  description: z.string().max(200).nullish(),
  enabled: z.boolean().optional(),
};

export const createSinkSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('amqp'), url: brokerUrl, exchange: exchangeName, ...common }),
    z.strictObject({ kind: z.literal('nats'), url: brokerUrl, stream: streamName, subjectPrefix, ...common }),
  ],
  { error: 'must be amqp or nats' },
);
export const updateSinkSchema = z.strictObject({
  url: brokerUrl.optional(),
  exchange: exchangeName.optional(),
  stream: streamName.optional(),
  subjectPrefix: subjectPrefix.optional(),
  events: eventFilter.optional(),
  sessionId: z.string().min(1).nullish(),
  description: z.string().max(200).nullish(),
  enabled: z.boolean().optional(),
});

/** What the publisher reports of a sink: `failing` carries the broker's error in lastError. */
export const SINK_STATES = ['ok', 'failing', 'paused'] as const;

export interface SinkStatusView {
  state: (typeof SINK_STATES)[number];
  lastError: string | null;
  lastErrorAt: string | null;
  failingSince: string | null;
  lastPublishedAt: string | null;
  /** events recorded for this sink and not yet confirmed by its broker */
  pending: number;
  /** when the oldest of them was recorded */
  oldestPendingAt: string | null;
}

export interface SinkView {
  id: string;
  kind: SinkKind;
  /** the password (a NATS token: the user part) masked */
  url: string;
  exchange: string | null;
  stream: string | null;
  subjectPrefix: string | null;
  events: string[];
  sessionId: string | null;
  description: string | null;
  enabled: boolean;
  status: SinkStatusView;
  createdAt: string;
  updatedAt: string;
}

export const MASK = '****';

/** The URL as it may be shown: the password, or a NATS token given as the user, replaced by ****. */
export const maskedUrl = (raw: string): string => {
  if (!URL.canParse(raw)) return raw;
  const url = new URL(raw);
  if (url.password) url.password = MASK;
  else if (url.username && (url.protocol === 'nats:' || url.protocol === 'tls:')) url.username = MASK;
  return url.toString();
};

const checkScheme = (kind: SinkKind, url: string | undefined): void => {
  if (url === undefined) return;
  const { protocol } = new URL(url);
  if (!SCHEMES[kind].includes(protocol))
    throw validationFailed([{ path: 'url', message: `must be a ${SCHEMES[kind].map((s) => `${s}//`).join(' or ')} URL` }]);
};

const view = (row: EventSink, pending: { count: number; oldest: Date | null }): SinkView => ({
  id: row.id,
  kind: row.kind as SinkKind,
  url: maskedUrl(row.url),
  exchange: row.exchange,
  stream: row.stream,
  subjectPrefix: row.subjectPrefix,
  events: JSON.parse(row.events) as string[],
  sessionId: row.sessionId,
  description: row.description,
  enabled: row.enabled,
  status: {
    state: !row.enabled ? 'paused' : row.failingSince ? 'failing' : 'ok',
    lastError: row.lastError,
    lastErrorAt: row.lastErrorAt?.toISOString() ?? null,
    failingSince: row.failingSince?.toISOString() ?? null,
    lastPublishedAt: row.lastPublishedAt?.toISOString() ?? null,
    pending: pending.count,
    oldestPendingAt: pending.oldest?.toISOString() ?? null,
  },
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const pendingOf = async (ctx: RequestContext, ids: string[]): Promise<Map<string, { count: number; oldest: Date | null }>> => {
  if (ids.length === 0) return new Map();
  const groups = await ctx.db.sinkDelivery.groupBy({
    by: ['sinkId'],
    where: { sinkId: { in: ids } },
    _count: { _all: true },
    _min: { createdAt: true },
  });
  return new Map(groups.map((g) => [g.sinkId, { count: g._count._all, oldest: g._min.createdAt }]));
};

const NONE = { count: 0, oldest: null };

const viewsOf = async (ctx: RequestContext, rows: EventSink[]): Promise<SinkView[]> => {
  const pending = await pendingOf(
    ctx,
    rows.map((r) => r.id),
  );
  return rows.map((r) => view(r, pending.get(r.id) ?? NONE));
};

const ownSink = async (ctx: RequestContext, id: string): Promise<EventSink> => {
  const row = await ctx.db.eventSink.findFirst({ where: { id, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Sink');
  return row;
};

/** The outbox matches events against its cached list, and the publisher takes up the change at once. */
const changed = (ctx: RequestContext): void => {
  ctx.webhooks.invalidate(ctx.caller.accountId);
  ctx.sinks.changed();
};

export const listSinks = async (ctx: RequestContext): Promise<SinkView[]> =>
  viewsOf(ctx, await ctx.db.eventSink.findMany({ where: { accountId: ctx.caller.accountId }, orderBy: { createdAt: 'asc' } }));

export const getSink = async (ctx: RequestContext, id: string): Promise<SinkView> => (await viewsOf(ctx, [await ownSink(ctx, id)]))[0];

export const createSink = async (ctx: RequestContext, input: unknown): Promise<SinkView> => {
  const body = parseInput(createSinkSchema, input);
  checkScheme(body.kind, body.url);
  if (body.sessionId) await ownSession(ctx, body.sessionId);
  const row = await ctx.db.eventSink.create({
    data: {
      accountId: ctx.caller.accountId,
      kind: body.kind,
      url: body.url,
      ...(body.kind === 'amqp' ? { exchange: body.exchange } : { stream: body.stream, subjectPrefix: body.subjectPrefix }),
      events: JSON.stringify([...new Set(body.events)]),
      sessionId: body.sessionId ?? null,
      description: body.description ?? null,
      enabled: body.enabled ?? true,
    },
  });
  changed(ctx);
  return view(row, NONE);
};

export const updateSink = async (ctx: RequestContext, id: string, input: unknown): Promise<SinkView> => {
  const body = parseInput(updateSinkSchema, input);
  const old = await ownSink(ctx, id);
  const kind = old.kind as SinkKind;
  checkScheme(kind, body.url);
  const foreign = kind === 'amqp' ? (['stream', 'subjectPrefix'] as const) : (['exchange'] as const);
  const given = foreign.filter((key) => body[key] !== undefined);
  if (given.length > 0) throw validationFailed(given.map((key) => ({ path: key, message: `is not a field of a ${kind} sink` })));
  if (body.sessionId) await ownSession(ctx, body.sessionId);
  const row = await ctx.db.eventSink.update({
    where: { id },
    data: {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.exchange !== undefined ? { exchange: body.exchange } : {}),
      ...(body.stream !== undefined ? { stream: body.stream } : {}),
      ...(body.subjectPrefix !== undefined ? { subjectPrefix: body.subjectPrefix } : {}),
      ...(body.events !== undefined ? { events: JSON.stringify([...new Set(body.events)]) } : {}),
      ...(body.sessionId !== undefined ? { sessionId: body.sessionId } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      // a new address or target starts its failure count afresh
      ...(body.url !== undefined || body.exchange !== undefined || body.stream !== undefined || body.subjectPrefix !== undefined
        ? { failingSince: null }
        : {}),
    },
  });
  changed(ctx);
  return (await viewsOf(ctx, [row]))[0];
};

/** Removes the sink and the events still waiting for it. */
export const deleteSink = async (ctx: RequestContext, id: string): Promise<{ ok: true }> => {
  await ownSink(ctx, id);
  await ctx.db.$transaction([ctx.db.sinkDelivery.deleteMany({ where: { sinkId: id } }), ctx.db.eventSink.delete({ where: { id } })]);
  changed(ctx);
  return { ok: true };
};
