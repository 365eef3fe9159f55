import type { SinkStatusView, SinkView } from '../resolvers/sinks.ts';
import { SINK_KINDS, SINK_STATES, createSink, deleteSink, getSink, listSinks, updateSink } from '../resolvers/sinks.ts';
import { builder, dateOf, dateOrNull } from './builder.ts';

const SinkKind = builder.enumType('SinkKind', { values: SINK_KINDS });
const SinkState = builder.enumType('SinkState', { values: SINK_STATES });

const SinkStatusRef = builder.objectRef<SinkStatusView>('SinkStatus').implement({
  description: "What this sink's publisher reports: failing carries the broker's error in lastError.",
  fields: (t) => ({
    state: t.field({ type: SinkState, resolve: (s) => s.state }),
    lastError: t.exposeString('lastError', { nullable: true }),
    lastErrorAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => dateOrNull(s.lastErrorAt) }),
    failingSince: t.field({ type: 'DateTime', nullable: true, resolve: (s) => dateOrNull(s.failingSince) }),
    lastPublishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => dateOrNull(s.lastPublishedAt) }),
    pending: t.exposeInt('pending', { description: 'events recorded for this sink and not yet confirmed by its broker' }),
    oldestPendingAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => dateOrNull(s.oldestPendingAt) }),
  }),
});

const SinkRef = builder.objectRef<SinkView>('Sink').implement({
  description: "A broker this account's events are published into: a RabbitMQ topic exchange (amqp) or a JetStream stream (nats).",
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.field({ type: SinkKind, resolve: (s) => s.kind }),
    url: t.exposeString('url', { description: 'the password (a NATS token: the user part) shown as ****' }),
    exchange: t.exposeString('exchange', { nullable: true }),
    stream: t.exposeString('stream', { nullable: true }),
    subjectPrefix: t.exposeString('subjectPrefix', { nullable: true }),
    events: t.exposeStringList('events'),
    sessionId: t.exposeString('sessionId', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    enabled: t.exposeBoolean('enabled'),
    status: t.field({ type: SinkStatusRef, resolve: (s) => s.status }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => dateOf(s.createdAt) }),
    updatedAt: t.field({ type: 'DateTime', resolve: (s) => dateOf(s.updatedAt) }),
  }),
});

builder.queryFields((t) => ({
  sinks: t.field({ type: [SinkRef], resolve: (_root, _args, ctx) => listSinks(ctx) }),
  sink: t.field({
    type: SinkRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getSink(ctx, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createSink: t.field({
    type: SinkRef,
    args: {
      kind: t.arg({ type: SinkKind, required: true }),
      url: t.arg.string({ required: true }),
      exchange: t.arg.string(),
      stream: t.arg.string(),
      subjectPrefix: t.arg.string(),
      events: t.arg.stringList({ required: true }),
      sessionId: t.arg.id(),
      description: t.arg.string(),
      enabled: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      createSink(ctx, {
        kind: args.kind,
        url: args.url,
        // only the target fields of the kind given: a field of the other kind is refused, as in REST
        ...(args.exchange != null ? { exchange: args.exchange } : {}),
        ...(args.stream != null ? { stream: args.stream } : {}),
        ...(args.subjectPrefix != null ? { subjectPrefix: args.subjectPrefix } : {}),
        events: args.events,
        sessionId: args.sessionId ?? undefined,
        description: args.description ?? undefined,
        enabled: args.enabled ?? undefined,
      }),
  }),
  updateSink: t.field({
    type: SinkRef,
    args: {
      id: t.arg.id({ required: true }),
      url: t.arg.string(),
      exchange: t.arg.string(),
      stream: t.arg.string(),
      subjectPrefix: t.arg.string(),
      events: t.arg.stringList(),
      sessionId: t.arg.id(),
      description: t.arg.string(),
      enabled: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      updateSink(ctx, String(args.id), {
        url: args.url ?? undefined,
        exchange: args.exchange ?? undefined,
        stream: args.stream ?? undefined,
        subjectPrefix: args.subjectPrefix ?? undefined,
        events: args.events ?? undefined,
        // null clears the session filter; leaving the argument out keeps it
        sessionId: args.sessionId === null ? null : args.sessionId === undefined ? undefined : String(args.sessionId),
        description: args.description ?? undefined,
        enabled: args.enabled ?? undefined,
      }),
  }),
  deleteSink: t.field({
    type: 'Boolean',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await deleteSink(ctx, String(args.id))).ok,
  }),
}));
