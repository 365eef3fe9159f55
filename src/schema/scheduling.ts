import type { RecurringView } from '../resolvers/recurring.ts';
import type { ScheduleAnswer } from '../resolvers/scheduling.ts';
import { campaignTopic } from '../resolvers/topics.ts';
import type { CampaignProgress } from '../runtime/ports/events.ts';
import { cancelRecurring, listRecurring } from '../resolvers/recurring.ts';
import { scheduleMessage, sendVariation, startCampaign, startRecurring } from '../resolvers/scheduling.ts';
import { DomainError } from '../resolvers/errors.ts';
import { builder, dateOf, once, withoutNulls } from './builder.ts';

const ScheduleResult = builder.objectRef<ScheduleAnswer>('ScheduleResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    scheduledInMs: t.exposeInt('scheduledInMs'),
    sendAt: t.field({ type: 'DateTime', resolve: (r) => dateOf(r.sendAt) }),
    messageId: t.exposeID('messageId'),
    jobId: t.exposeID('jobId'),
  }),
});

const CampaignResult = builder.objectRef<{ ok: boolean; count: number; campaignId: string }>('CampaignResult').implement({
  fields: (t) => ({ ok: t.exposeBoolean('ok'), count: t.exposeInt('count'), campaignId: t.exposeID('campaignId') }),
});

const VariationResult = builder.objectRef<{ ok: boolean; count: number; sent: string[] }>('VariationResult').implement({
  fields: (t) => ({ ok: t.exposeBoolean('ok'), count: t.exposeInt('count'), sent: t.exposeStringList('sent') }),
});

const RecurringResult = builder.objectRef<{ ok: boolean; recurringEveryMs: number; timerId: string }>('RecurringResult').implement({
  fields: (t) => ({ ok: t.exposeBoolean('ok'), recurringEveryMs: t.exposeInt('recurringEveryMs'), timerId: t.exposeID('timerId') }),
});

const RecurringMessage = builder.objectRef<RecurringView>('RecurringMessage').implement({
  fields: (t) => ({
    timerId: t.exposeID('timerId'),
    sessionId: t.exposeID('sessionId'),
    to: t.exposeString('to'),
    message: t.exposeString('message'),
    everyMs: t.exposeInt('everyMs'),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => dateOf(r.createdAt) }),
  }),
});

export const Progress = builder.objectRef<CampaignProgress>('CampaignProgress').implement({
  fields: (t) => ({
    campaignId: t.exposeID('campaignId'),
    total: t.exposeInt('total'),
    sent: t.exposeInt('sent'),
    failed: t.exposeInt('failed'),
    remaining: t.exposeInt('remaining'),
  }),
});

const CampaignContact = builder.inputType('CampaignContactInput', {
  fields: (t) => ({ jid: t.string({ required: true }), name: t.string() }),
});

builder.queryField('recurringMessages', (t) =>
  t.field({
    type: [RecurringMessage],
    args: { sessionId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await listRecurring(ctx, String(args.sessionId))).items,
  }),
);

builder.mutationFields((t) => ({
  scheduleMessage: t.field({
    type: ScheduleResult,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      to: t.arg.string({ required: true }),
      message: t.arg.string({ required: true }),
      sendAt: t.arg({ type: 'DateTime' }),
      delayMs: t.arg.int(),
      isGroup: t.arg.boolean(),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, sendAt, ...args }) =>
        scheduleMessage(ctx, String(sessionId), withoutNulls({ ...args, sendAt: sendAt?.toISOString() })),
      ),
  }),
  startCampaign: t.field({
    type: CampaignResult,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      contacts: t.arg({ type: [CampaignContact], required: true }),
      template: t.arg.string({ required: true }),
      delayMs: t.arg.int(),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, contacts, ...args }) =>
        startCampaign(ctx, String(sessionId), { ...withoutNulls(args), contacts: contacts.map(withoutNulls) }),
      ),
  }),
  sendVariation: t.field({
    type: VariationResult,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      to: t.arg.string({ required: true }),
      variations: t.arg.stringList({ required: true }),
      delayMs: t.arg.int(),
      isGroup: t.arg.boolean(),
      quotedMessageId: t.arg.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
      mentions: t.arg.stringList({ description: 'people mentioned, by number (digits) or JID (phone-number or LID)' }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, ...args }) => sendVariation(ctx, String(sessionId), withoutNulls(args))),
  }),
  startRecurring: t.field({
    type: RecurringResult,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      to: t.arg.string({ required: true }),
      message: t.arg.string({ required: true }),
      everyMs: t.arg.int({ required: true }),
      isGroup: t.arg.boolean(),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, ...args }) => startRecurring(ctx, String(sessionId), withoutNulls(args))),
  }),
  cancelRecurring: t.field({
    type: 'Boolean',
    args: { sessionId: t.arg.id({ required: true }), timerId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await cancelRecurring(ctx, String(args.sessionId), String(args.timerId))).ok,
  }),
}));

builder.subscriptionField('campaignProgress', (t) =>
  t.field({
    type: Progress,
    description: 'Sent, failed and remaining counts of a campaign after each of its messages.',
    args: { campaignId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const id = String(args.campaignId);
      // Bulk sends pick their id before any record exists, so an unknown id may be subscribed to;
      // an id whose records belong to another account may not.
      const foreign = await ctx.db.outgoingMessage.findFirst({
        where: { campaignId: id, accountId: { not: ctx.caller.accountId } },
        select: { id: true },
      });
      if (foreign) throw new DomainError('NOT_FOUND', 'Campaign not found');
      return ctx.events.subscribe('campaign', campaignTopic(ctx.caller.accountId, id));
    },
    resolve: (progress) => progress,
  }),
);
