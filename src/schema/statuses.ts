import type { StatusAnswer } from '../resolvers/statuses.ts';
import { scheduleStatus, sendStatus, startRecurringStatus, statusTypeSchema } from '../resolvers/statuses.ts';
import { builder, withoutNulls, once } from './builder.ts';

const StatusTypeEnum = builder.enumType('StatusType', { values: statusTypeSchema.options });

const StatusResult = builder.objectRef<StatusAnswer>('StatusResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    accepted: t.exposeBoolean('accepted'),
    validation: t.exposeString('validation'),
    deliveryState: t.exposeString('deliveryState'),
    type: t.field({ type: StatusTypeEnum, resolve: (r) => r.type }),
    target: t.exposeString('target'),
    recipientsCount: t.exposeInt('recipientsCount'),
    statusJidList: t.exposeStringList('statusJidList'),
    messageId: t.exposeID('messageId'),
  }),
});

const StatusScheduled = builder.objectRef<{ ok: boolean; scheduledInMs: number }>('StatusScheduled').implement({
  fields: (t) => ({ ok: t.exposeBoolean('ok'), scheduledInMs: t.exposeInt('scheduledInMs') }),
});

const StatusRecurring = builder.objectRef<{ ok: boolean; recurringEveryMs: number; timerId: string }>('StatusRecurring').implement({
  fields: (t) => ({ ok: t.exposeBoolean('ok'), recurringEveryMs: t.exposeInt('recurringEveryMs'), timerId: t.exposeID('timerId') }),
});

const StatusInput = builder.inputType('StatusInput', {
  fields: (t) => ({
    type: t.field({ type: StatusTypeEnum, required: true }),
    text: t.string(),
    url: t.string(),
    caption: t.string(),
    backgroundColor: t.string(),
    statusJidList: t.stringList(),
    audience: t.string(),
  }),
});

builder.mutationFields((t) => ({
  sendStatus: t.field({
    type: StatusResult,
    args: { idempotencyKey: t.arg.string(), sessionId: t.arg.id({ required: true }), input: t.arg({ type: StatusInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => sendStatus(ctx, String(args.sessionId), withoutNulls(args.input))),
  }),
  scheduleStatus: t.field({
    type: StatusScheduled,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      payload: t.arg({ type: StatusInput, required: true }),
      delayMs: t.arg.int({ required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) =>
        scheduleStatus(ctx, String(args.sessionId), { payload: withoutNulls(args.payload), delayMs: args.delayMs }),
      ),
  }),
  startRecurringStatus: t.field({
    type: StatusRecurring,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      payload: t.arg({ type: StatusInput, required: true }),
      everyMs: t.arg.int({ required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) =>
        startRecurringStatus(ctx, String(args.sessionId), { payload: withoutNulls(args.payload), everyMs: args.everyMs }),
      ),
  }),
}));
