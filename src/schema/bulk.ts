import type { BulkResult } from '../resolvers/bulk.ts';
import { bulkToContactGroup, bulkToTag } from '../resolvers/bulk.ts';
import { builder, withoutNulls, once } from './builder.ts';

const BulkError = builder.objectRef<BulkResult['errors'][number]>('BulkSendError').implement({
  fields: (t) => ({ jid: t.exposeString('jid'), reason: t.exposeString('reason') }),
});

const BulkResultRef = builder.objectRef<BulkResult>('BulkSendResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    total: t.exposeInt('total'),
    sent: t.exposeInt('sent'),
    failed: t.exposeInt('failed'),
    errors: t.field({ type: [BulkError], resolve: (r) => r.errors }),
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
