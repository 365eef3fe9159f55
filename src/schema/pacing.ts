import { getAccountPacing, healthOf, updateAccountPacing } from '../resolvers/pacing.ts';
import type { SessionHealth } from '../resolvers/pacing.ts';
import type { PacingDefaults } from '../resolvers/session-settings.ts';
import { cancelQueued, QUEUE_ORDER } from '../resolvers/queue.ts';
import { ownSession } from '../resolvers/sessions.ts';
import { builder } from './builder.ts';

const AccountPacingRef = builder.objectRef<PacingDefaults>('AccountPacing').implement({
  description: "The account's send pacing defaults for its sessions; null = the process default (docs/ban-safety.md).",
  fields: (t) => ({
    sendIntervalMs: t.exposeInt('sendIntervalMs', { nullable: true }),
    sendJitterMs: t.exposeInt('sendJitterMs', { nullable: true }),
    perChatIntervalMs: t.exposeInt('perChatIntervalMs', { nullable: true }),
    typingMsPerChar: t.exposeInt('typingMsPerChar', { nullable: true }),
    warmup: t.exposeBoolean('warmup', { nullable: true }),
  }),
});

const AccountPacingInput = builder.inputType('AccountPacingInput', {
  description: 'The pacing defaults to change; null puts one back to the process default, those left out are kept.',
  fields: (t) => ({
    sendIntervalMs: t.int(),
    sendJitterMs: t.int(),
    perChatIntervalMs: t.int(),
    typingMsPerChar: t.int(),
    warmup: t.boolean(),
  }),
});

builder.prismaObjectFields('Account', (t) => ({
  pacing: t.field({ type: AccountPacingRef, resolve: async (_row, _args, ctx) => (await getAccountPacing(ctx)).settings }),
}));

const HealthState = builder.enumType('SendHealthState', { values: ['ok', 'paused', 'restricted', 'banned'] as const });

const HealthRef = builder.objectRef<SessionHealth>('SessionHealth').implement({
  description: "A session's sending health (the session.health webhook): paused after rate answers, restricted, banned.",
  fields: (t) => ({
    sessionId: t.exposeID('sessionId'),
    state: t.field({ type: HealthState, resolve: (h) => h.state }),
    reason: t.exposeString('reason', { nullable: true, description: 'what the network answered' }),
    pausedUntil: t.field({ type: 'DateTime', nullable: true, resolve: (h) => (h.pausedUntil ? new Date(h.pausedUntil) : null) }),
    rateAnswers: t.exposeInt('rateAnswers', { description: 'rate-overlimit answers since the process started' }),
    queueLength: t.exposeInt('queueLength', { description: 'PENDING records, scheduled ones included' }),
    at: t.field({ type: 'DateTime', resolve: (h) => new Date(h.at) }),
  }),
});

builder.prismaObjectFields('Session', (t) => ({
  queue: t.relatedConnection('messages', {
    cursor: 'id',
    totalCount: true,
    description: 'The send queue: PENDING messages in the order they go (paced and scheduled), each with its sendAt.',
    query: () => ({ where: { status: 'PENDING' }, orderBy: QUEUE_ORDER }),
  }),
  health: t.field({ type: HealthRef, resolve: (row, _args, ctx) => healthOf(ctx, row.id) }),
}));

builder.mutationFields((t) => ({
  updateAccountPacing: t.field({
    type: AccountPacingRef,
    args: { input: t.arg({ type: AccountPacingInput, required: true }) },
    resolve: async (_root, args, ctx) =>
      (await updateAccountPacing(ctx, Object.fromEntries(Object.entries(args.input).filter(([, v]) => v !== undefined)))).settings,
  }),
  cancelQueuedMessage: t.prismaField({
    type: 'OutgoingMessage',
    description: 'Cancel a queued message: it becomes FAILED and its quota unit is given back.',
    args: { sessionId: t.arg.id({ required: true }), messageId: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => cancelQueued(ctx, String(args.sessionId), String(args.messageId)),
  }),
}));

builder.subscriptionFields((t) => ({
  sessionHealth: t.field({
    type: HealthRef,
    description: "Changes of the session's sending health.",
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('health', String(args.sessionId));
    },
    resolve: (health) => health,
  }),
}));
