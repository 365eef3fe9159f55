import { fetchChatHistory } from '../resolvers/history.ts';
import type { FetchHistoryAnswer } from '../resolvers/history.ts';
import { builder } from './builder.ts';

const FetchHistoryResult = builder.objectRef<FetchHistoryAnswer>('FetchHistoryResult').implement({
  description: "An on-demand history request sent to the account's phone (docs/conversations.md, History from the phone).",
  fields: (t) => ({
    chatId: t.exposeString('chatId'),
    requestId: t.exposeString('requestId', {
      description: "the request's network id: the history.synced event (syncType on_demand) that answers it carries it",
    }),
    count: t.exposeInt('count'),
    before: t.exposeString('before', { description: 'the oldest stored message of the chat, which the phone pages back from' }),
  }),
});

builder.mutationFields((t) => ({
  fetchChatHistory: t.field({
    type: FetchHistoryResult,
    description:
      'Ask the phone for up to `count` (1-500, default 50) messages of a chat older than the oldest stored; they arrive later, stored as history, with one history.synced event.',
    args: { sessionId: t.arg.id({ required: true }), chatId: t.arg.string({ required: true }), count: t.arg.int() },
    resolve: (_root, args, ctx) =>
      fetchChatHistory(
        ctx,
        String(args.sessionId),
        args.chatId,
        args.count === null || args.count === undefined ? {} : { count: args.count },
      ),
  }),
}));
