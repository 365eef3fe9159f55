import { z } from 'zod';
import {
  SINK_KINDS,
  SINK_STATES,
  createSink,
  createSinkSchema,
  deleteSink,
  getSink,
  listSinks,
  updateSink,
  updateSinkSchema,
} from '../resolvers/sinks.ts';
import { dateTime, ok } from './answers.ts';
import { route } from './route.ts';
import type { Route } from './route.ts';

const tag = 'Sinks';
const S = '/sinks/:sinkId';

const sink = z
  .object({
    id: z.string(),
    kind: z.enum(SINK_KINDS),
    url: z.string().describe('the password (a NATS token: the user part) shown as ****'),
    exchange: z.string().nullable().describe('amqp: the durable topic exchange'),
    stream: z.string().nullable().describe('nats: the JetStream stream'),
    subjectPrefix: z.string().nullable().describe('nats: subjects are <subjectPrefix>.<account>.<session>.<event type>'),
    events: z.array(z.string()),
    sessionId: z.string().nullable(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    status: z.object({
      state: z.enum(SINK_STATES),
      lastError: z.string().nullable(),
      lastErrorAt: dateTime.nullable(),
      failingSince: dateTime.nullable(),
      lastPublishedAt: dateTime.nullable(),
      pending: z.number().int().describe('events recorded for this sink and not yet confirmed by its broker'),
      oldestPendingAt: dateTime.nullable(),
    }),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'Sink' });

export const sinksRoutes: Route[] = [
  route({
    method: 'get',
    path: '/sinks',
    summary: "Extension: the account's event sinks (RabbitMQ, NATS JetStream)",
    tag,
    response: z.array(sink),
    handler: ({ ctx }) => listSinks(ctx),
  }),
  route({
    method: 'post',
    path: '/sinks',
    summary: 'Extension: add an event sink',
    tag,
    body: createSinkSchema,
    response: sink,
    status: 201,
    handler: ({ ctx, body }) => createSink(ctx, body),
  }),
  route({
    method: 'get',
    path: S,
    summary: 'Extension: one event sink with its status',
    tag,
    response: sink,
    handler: ({ ctx, params }) => getSink(ctx, params.sinkId),
  }),
  route({
    method: 'patch',
    path: S,
    summary: 'Extension: change, pause (enabled: false) or resume an event sink',
    tag,
    body: updateSinkSchema,
    response: sink,
    handler: ({ ctx, params, body }) => updateSink(ctx, params.sinkId, body),
  }),
  route({
    method: 'delete',
    path: S,
    summary: 'Extension: remove an event sink and the events still waiting for it',
    tag,
    response: ok,
    handler: ({ ctx, params }) => deleteSink(ctx, params.sinkId),
  }),
];
