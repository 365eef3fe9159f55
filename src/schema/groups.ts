import type { GroupMember } from '../runtime/ports/network.ts';
import type { GroupView, ParticipantsAnswer } from '../resolvers/groups.ts';
import {
  countGroups,
  createGroup,
  getGroup,
  groupInviteCode,
  joinGroup,
  leaveGroup,
  listGroups,
  participantActionSchema,
  sendInteractiveToGroup,
  sendMediaToGroup,
  sendToGroup,
  setGroupPrivacy,
  updateGroup,
  updateParticipants,
} from '../resolvers/groups.ts';
import { builder, withoutNulls, once } from './builder.ts';
import { ButtonInput, cleanButtons, mediaFields, replyInputFields, SectionInput, SendResultRef } from './messages.ts';

const ParticipantActionEnum = builder.enumType('ParticipantAction', { values: participantActionSchema.options });
const GroupAdminRole = builder.enumType('GroupAdminRole', { values: ['admin', 'superadmin'] as const });

const Member = builder.objectRef<GroupMember>('GroupMember').implement({
  fields: (t) => ({
    id: t.exposeString('id', { description: 'the phone-number JID when the network shows it, else the LID JID' }),
    phoneNumber: t.exposeString('phoneNumber', { nullable: true, description: 'the phone number (digits), null when the member hides it' }),
    lid: t.exposeString('lid', { nullable: true, description: "the member's LID, when the network told it" }),
    admin: t.field({ type: GroupAdminRole, nullable: true, resolve: (m) => m.admin ?? null }),
  }),
});

const Group = builder.objectRef<GroupView>('Group').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    subject: t.exposeString('subject'),
    desc: t.exposeString('desc'),
    participants: t.field({ type: [Member], resolve: (g) => g.participants }),
  }),
});

const ParticipantsResult = builder.objectRef<ParticipantsAnswer>('GroupParticipantsResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    action: t.field({ type: ParticipantActionEnum, resolve: (r) => r.action }),
    participants: t.exposeStringList('participants'),
  }),
});

const GroupMediaInput = builder.inputType('GroupMediaInput', {
  fields: (t) => mediaFields(t),
});

const GroupInteractiveInput = builder.inputType('GroupInteractiveInput', {
  fields: (t) => ({
    body: t.string({ required: true }),
    header: t.string(),
    footer: t.string(),
    buttons: t.field({ type: [ButtonInput] }),
    sections: t.field({ type: [SectionInput] }),
    ...replyInputFields(t),
  }),
});

builder.prismaObjectFields('Session', (t) => ({
  // Nullable: in a list of sessions, one that is not connected answers null with its error, not the whole list.
  groups: t.field({
    type: [Group],
    nullable: true,
    description:
      "The network groups this session's account is in, as the network reports them (null with SESSION_NOT_CONNECTED unless CONNECTED).",
    resolve: (row, _args, ctx) => listGroups(ctx, row.id),
  }),
  groupsCount: t.int({
    nullable: true,
    description: 'How many network groups this session is in (null with SESSION_NOT_CONNECTED unless CONNECTED).',
    resolve: async (row, _args, ctx) => (await countGroups(ctx, row.id)).count,
  }),
}));

builder.queryFields((t) => ({
  group: t.field({
    type: Group,
    args: { sessionId: t.arg.id({ required: true }), groupId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getGroup(ctx, String(args.sessionId), String(args.groupId)),
  }),
  groupInviteCode: t.string({
    args: { sessionId: t.arg.id({ required: true }), groupId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await groupInviteCode(ctx, String(args.sessionId), String(args.groupId))).inviteCode,
  }),
}));

builder.mutationFields((t) => ({
  createGroup: t.field({
    type: Group,
    args: {
      sessionId: t.arg.id({ required: true }),
      subject: t.arg.string({ required: true }),
      participants: t.arg.stringList({ required: true }),
    },
    resolve: (_root, { sessionId, ...args }, ctx) => createGroup(ctx, String(sessionId), args),
  }),
  joinGroup: t.id({
    args: { sessionId: t.arg.id({ required: true }), inviteCode: t.arg.string({ required: true }) },
    resolve: async (_root, { sessionId, ...args }, ctx) => (await joinGroup(ctx, String(sessionId), args)).groupId,
  }),
  updateGroup: t.boolean({
    args: {
      sessionId: t.arg.id({ required: true }),
      groupId: t.arg.id({ required: true }),
      subject: t.arg.string(),
      description: t.arg.string(),
    },
    resolve: async (_root, { sessionId, groupId, ...args }, ctx) =>
      (await updateGroup(ctx, String(sessionId), String(groupId), withoutNulls(args))).ok,
  }),
  leaveGroup: t.boolean({
    args: { sessionId: t.arg.id({ required: true }), groupId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await leaveGroup(ctx, String(args.sessionId), String(args.groupId))).ok,
  }),
  updateGroupParticipants: t.field({
    type: ParticipantsResult,
    args: {
      sessionId: t.arg.id({ required: true }),
      groupId: t.arg.id({ required: true }),
      participants: t.arg.stringList({ required: true }),
      action: t.arg({ type: ParticipantActionEnum, required: true }),
    },
    resolve: (_root, { sessionId, groupId, ...args }, ctx) => updateParticipants(ctx, String(sessionId), String(groupId), args),
  }),
  setGroupAdminOnly: t.boolean({
    args: { sessionId: t.arg.id({ required: true }), groupId: t.arg.id({ required: true }), adminOnly: t.arg.boolean({ required: true }) },
    resolve: async (_root, { sessionId, groupId, ...args }, ctx) =>
      (await setGroupPrivacy(ctx, String(sessionId), String(groupId), args)).adminOnly,
  }),
  sendGroupText: t.field({
    type: SendResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      groupId: t.arg.id({ required: true }),
      message: t.arg.string({ required: true }),
      quotedMessageId: t.arg.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
      mentions: t.arg.stringList({ description: 'members mentioned, by number (digits) or JID (phone-number or LID)' }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, groupId, ...args }) =>
        sendToGroup(ctx, String(sessionId), String(groupId), withoutNulls(args)),
      ),
  }),
  sendGroupMedia: t.field({
    type: SendResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      groupId: t.arg.id({ required: true }),
      input: t.arg({ type: GroupMediaInput, required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => sendMediaToGroup(ctx, String(args.sessionId), String(args.groupId), withoutNulls(args.input))),
  }),
  sendGroupInteractive: t.field({
    type: SendResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      groupId: t.arg.id({ required: true }),
      input: t.arg({ type: GroupInteractiveInput, required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) =>
        sendInteractiveToGroup(ctx, String(args.sessionId), String(args.groupId), cleanButtons(args.input)),
      ),
  }),
}));
