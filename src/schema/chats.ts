import type { CallReceived, PresenceUpdate } from '../runtime/ports/events.ts';
import type { MarkReadAnswer, NumberCheck, SessionSettings } from '../resolvers/chats.ts';
import {
  checkNumbers,
  markChatRead,
  profilePicture,
  setOwnPresence,
  settingsOf,
  subscribePresence,
  updateSessionSettings,
} from '../resolvers/chats.ts';
import { ownSession } from '../resolvers/sessions.ts';
import { builder, withoutNulls } from './builder.ts';

const SessionSettingsRef = builder.objectRef<SessionSettings>('SessionSettings').implement({
  description: "A session's settings for read receipts, ignore filters and calls (REST: /v1/sessions/{id}/settings).",
  fields: (t) => ({
    sendReadReceipts: t.exposeBoolean('sendReadReceipts', { description: 'read marks send read receipts (off by default)' }),
    ignoreGroups: t.exposeBoolean('ignoreGroups', { description: 'received group messages are dropped' }),
    ignoreStatuses: t.exposeBoolean('ignoreStatuses', { description: 'received statuses are dropped' }),
    ignoreBroadcasts: t.exposeBoolean('ignoreBroadcasts', { description: 'messages received through broadcast lists are dropped' }),
    ignoreChannels: t.exposeBoolean('ignoreChannels', { description: 'received channel posts are dropped' }),
    rejectCalls: t.exposeBoolean('rejectCalls', { description: 'incoming calls are rejected' }),
    rejectCallsMessage: t.exposeString('rejectCallsMessage', { nullable: true, description: 'sent to a caller whose call was rejected' }),
    sendIntervalMs: t.exposeInt('sendIntervalMs', {
      nullable: true,
      description: 'least time between two sends; null = PACING_INTERVAL_MS',
    }),
    sendJitterMs: t.exposeInt('sendJitterMs', { nullable: true, description: 'random extra wait per interval; null = PACING_JITTER_MS' }),
    perChatIntervalMs: t.exposeInt('perChatIntervalMs', {
      nullable: true,
      description: 'least time between two sends to one chat; null = PACING_PER_CHAT_MS',
    }),
    typingMsPerChar: t.exposeInt('typingMsPerChar', {
      nullable: true,
      description: '"typing…" shown before each text, per character; null = PACING_TYPING_MS_PER_CHAR',
    }),
    warmup: t.exposeBoolean('warmup', {
      nullable: true,
      description:
        "a newly linked number's sends are capped per day for its first days; null = the account's choice (on unless it says off)",
    }),
  }),
});

const SessionSettingsInput = builder.inputType('SessionSettingsInput', {
  description: 'The settings to change; those left out are kept. rejectCallsMessage: null clears it.',
  fields: (t) => ({
    sendReadReceipts: t.boolean(),
    ignoreGroups: t.boolean(),
    ignoreStatuses: t.boolean(),
    ignoreBroadcasts: t.boolean(),
    ignoreChannels: t.boolean(),
    rejectCalls: t.boolean(),
    rejectCallsMessage: t.string(),
    sendIntervalMs: t.int(),
    sendJitterMs: t.int(),
    perChatIntervalMs: t.int(),
    typingMsPerChar: t.int(),
    warmup: t.boolean(),
  }),
});

const NumberCheckRef = builder.objectRef<NumberCheck>('NumberCheck').implement({
  fields: (t) => ({
    number: t.exposeString('number'),
    onWhatsApp: t.exposeBoolean('onWhatsApp'),
    jid: t.exposeString('jid', { nullable: true }),
    lid: t.exposeString('lid', { nullable: true, description: 'when the network told it' }),
  }),
});

const MarkReadResult = builder.objectRef<MarkReadAnswer>('MarkReadResult').implement({
  fields: (t) => ({
    chatId: t.exposeString('chatId'),
    read: t.exposeStringList('read', { description: 'network ids of the messages marked read' }),
    unknown: t.exposeStringList('unknown', { description: 'ids given that could not be marked (group messages this link has not seen)' }),
  }),
});

const PresenceState = builder.enumType('PresenceState', {
  values: ['available', 'unavailable', 'composing', 'recording', 'paused'] as const,
});

const PictureSize = builder.enumType('PictureSize', {
  description: 'image: the full picture; preview: its thumbnail',
  values: ['image', 'preview'] as const,
});

const OwnPresence = builder.enumType('OwnPresence', { values: ['available', 'unavailable'] as const });

const PresenceUpdateRef = builder.objectRef<PresenceUpdate>('PresenceUpdate').implement({
  description: 'A presence the session subscribed to (the presence.update webhook).',
  fields: (t) => ({
    sessionId: t.exposeID('sessionId'),
    chatId: t.exposeString('chatId', { description: 'the person, or the group they type in' }),
    from: t.exposeString('from', { description: 'the phone-number JID when known, else the LID JID' }),
    fromLid: t.exposeString('fromLid', { nullable: true }),
    presence: t.field({ type: PresenceState, resolve: (u) => u.presence }),
    lastSeen: t.field({ type: 'DateTime', nullable: true, resolve: (u) => (u.lastSeen ? new Date(u.lastSeen) : null) }),
    at: t.field({ type: 'DateTime', resolve: (u) => new Date(u.at) }),
  }),
});

const CallRef = builder.objectRef<CallReceived>('CallReceived').implement({
  description: 'A call that rang the session (the call.received webhook).',
  fields: (t) => ({
    sessionId: t.exposeID('sessionId'),
    callId: t.exposeString('callId'),
    from: t.exposeString('from', { description: 'the phone-number JID when known, else the LID JID' }),
    fromLid: t.exposeString('fromLid', { nullable: true }),
    groupId: t.exposeString('groupId', { nullable: true }),
    isVideo: t.exposeBoolean('isVideo'),
    offline: t.exposeBoolean('offline', { description: 'delivered after the link was back: the call may be over' }),
    rejected: t.exposeBoolean('rejected', { description: 'the rejectCalls setting rejected it' }),
    at: t.field({ type: 'DateTime', resolve: (c) => new Date(c.at) }),
  }),
});

builder.prismaObjectFields('Session', (t) => ({
  settings: t.field({ type: SessionSettingsRef, resolve: (row) => settingsOf(row) }),
}));

builder.queryFields((t) => ({
  checkNumbers: t.field({
    type: [NumberCheckRef],
    description: 'Which of up to 50 phone numbers are on WhatsApp, with their JID and LID.',
    args: { sessionId: t.arg.id({ required: true }), numbers: t.arg.stringList({ required: true }) },
    resolve: async (_root, args, ctx) => (await checkNumbers(ctx, String(args.sessionId), { numbers: args.numbers })).numbers,
  }),
}));

builder.queryFields((t) => ({
  profilePictureUrl: t.string({
    nullable: true,
    description:
      "The URL of a person's or group's profile picture (the link expires); null when there is none or its owner hides it from this account.",
    args: {
      sessionId: t.arg.id({ required: true }),
      chatId: t.arg.string({ required: true, description: 'a number, user JID, LID JID or group JID' }),
      size: t.arg({ type: PictureSize, defaultValue: 'image' }),
    },
    resolve: async (_root, args, ctx) =>
      (await profilePicture(ctx, String(args.sessionId), args.chatId, { size: args.size ?? 'image' })).url,
  }),
}));

builder.mutationFields((t) => ({
  updateSessionSettings: t.field({
    type: SessionSettingsRef,
    args: { sessionId: t.arg.id({ required: true }), input: t.arg({ type: SessionSettingsInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      // null clears the message and puts a pacing field back to the process default; a flag's null is no change
      const { rejectCallsMessage, sendIntervalMs, sendJitterMs, perChatIntervalMs, typingMsPerChar, warmup, ...flags } = args.input;
      const clearable = { rejectCallsMessage, sendIntervalMs, sendJitterMs, perChatIntervalMs, typingMsPerChar, warmup };
      const input = { ...withoutNulls(flags), ...Object.fromEntries(Object.entries(clearable).filter(([, v]) => v !== undefined)) };
      return (await updateSessionSettings(ctx, String(args.sessionId), input)).settings;
    },
  }),
  markChatRead: t.field({
    type: MarkReadResult,
    description: 'Send read receipts for received messages of a chat (those given, or all unread); needs sendReadReceipts.',
    args: { sessionId: t.arg.id({ required: true }), chatId: t.arg.string({ required: true }), messageIds: t.arg.stringList() },
    resolve: (_root, args, ctx) =>
      markChatRead(ctx, String(args.sessionId), args.chatId, args.messageIds ? { messageIds: args.messageIds } : {}),
  }),
  subscribePresence: t.boolean({
    description: "Ask for a contact's presence; updates arrive as presenceUpdates and presence.update webhooks.",
    args: { sessionId: t.arg.id({ required: true }), chatId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await subscribePresence(ctx, String(args.sessionId), args.chatId)).ok,
  }),
  setPresence: t.field({
    type: OwnPresence,
    description: 'Set our own presence.',
    args: { sessionId: t.arg.id({ required: true }), presence: t.arg({ type: OwnPresence, required: true }) },
    resolve: async (_root, args, ctx) => (await setOwnPresence(ctx, String(args.sessionId), { presence: args.presence })).presence,
  }),
}));

builder.subscriptionFields((t) => ({
  presenceUpdates: t.field({
    type: PresenceUpdateRef,
    description: 'Presence updates of the chats the session subscribed to.',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('presence', String(args.sessionId));
    },
    resolve: (update) => update,
  }),
  calls: t.field({
    type: CallRef,
    description: 'Calls that ring the session.',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('calls', String(args.sessionId));
    },
    resolve: (call) => call,
  }),
}));
