import type { BulkResult } from '../resolvers/bulk.ts';
import { bulkToContactGroup, bulkToTag } from '../resolvers/bulk.ts';
import { builder, withoutNulls, once } from './builder.ts';

const BulkError = builder.objectRef<BulkResult['errors'][number]>('BulkSendError').implement({
  fields: (t) => ({ jid: t.exposeString('jid'), reason: t.exposeString('reason') }),
});

const BulkQueued = builder.objectRef<NonNullable<BulkResult['queued']>[number]>('BulkSendQueued').implement({
  description: 'A message the network refused for the rate, back in the queue: PENDING until sendAt',
  fields: (t) => ({
    jid: t.exposeString('jid'),
    messageId: t.exposeID('messageId'),
    sendAt: t.field({ type: 'DateTime', resolve: (q) => new Date(q.sendAt) }),
  }),
});

const BulkResultRef = builder.objectRef<BulkResult>('BulkSendResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    total: t.exposeInt('total'),
    sent: t.exposeInt('sent'),
    failed: t.exposeInt('failed'),
    errors: t.field({ type: [BulkError], resolve: (r) => r.errors }),
    queued: t.field({
      type: [BulkQueued],
      description: 'Refused for the rate and back in the queue (neither sent nor failed yet)',
      resolve: (r) => r.queued ?? [],
    }),
  }),
});

builder.mutationFields((t) => ({
  bulkSendToContactGroup: t.field({
    type: BulkResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      groupId: t.arg.id({ required: true }),
      message: t.arg.string({ required: true }),
      delayMs: t.arg.int(),
      progressId: t.arg.id(),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, groupId, ...args }) =>
        bulkToContactGroup(ctx, String(sessionId), String(groupId), withoutNulls(args)),
      ),
  }),
  bulkSendToTag: t.field({
    type: BulkResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      tag: t.arg.string({ required: true }),
      message: t.arg.string({ required: true }),
      delayMs: t.arg.int(),
      progressId: t.arg.id(),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, tag, ...args }) => bulkToTag(ctx, String(sessionId), tag, withoutNulls(args))),
  }),
}));
