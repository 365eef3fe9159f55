import type { RetentionSettings } from '../resolvers/retention.ts';
import { eraseChat, getAccountSettings, MESSAGE_STORE_MODES, updateAccountSettings } from '../resolvers/retention.ts';
import { builder } from './builder.ts';

const MessageStoreMode = builder.enumType('MessageStoreMode', {
  description: "all: every message sent and received is stored; specOnly: none beyond what the spec's routes need",
  values: MESSAGE_STORE_MODES,
});

const MessageRetentionRef = builder.objectRef<RetentionSettings>('MessageRetention').implement({
  description: "The account's retention of stored messages (docs/conversations.md, Retention and erasure).",
  fields: (t) => ({
    messageRetentionDays: t.exposeInt('messageRetentionDays', {
      nullable: true,
      description: "stored messages older than this many days (by the network's time) are deleted, hourly; null = kept",
    }),
    messageStore: t.field({ type: MessageStoreMode, resolve: (r) => r.messageStore }),
  }),
});

const MessageRetentionInput = builder.inputType('MessageRetentionInput', {
  description: 'The retention to change; null puts one back to its default (kept; all), those left out are kept.',
  fields: (t) => ({
    messageRetentionDays: t.int(),
    messageStore: t.field({ type: MessageStoreMode }),
  }),
});

const retentionOf = ({ messageRetentionDays, messageStore }: RetentionSettings): RetentionSettings => ({
  messageRetentionDays,
  messageStore,
});

builder.prismaObjectFields('Account', (t) => ({
  messageRetention: t.field({
    type: MessageRetentionRef,
    resolve: async (_row, _args, ctx) => retentionOf((await getAccountSettings(ctx)).settings),
  }),
}));

builder.mutationFields((t) => ({
  updateMessageRetention: t.field({
    type: MessageRetentionRef,
    args: { input: t.arg({ type: MessageRetentionInput, required: true }) },
    resolve: async (_root, args, ctx) =>
      retentionOf(
        (await updateAccountSettings(ctx, Object.fromEntries(Object.entries(args.input).filter(([, v]) => v !== undefined)))).settings,
      ),
  }),
  eraseChat: t.int({
    description: "Erase a chat's stored messages, its chat row and search entries; answers how many messages were erased.",
    args: { sessionId: t.arg.id({ required: true }), chatId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => (await eraseChat(ctx, String(args.sessionId), { chatId: args.chatId })).erased,
  }),
}));
