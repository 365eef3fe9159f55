import { encodeCursor, searchMessages } from '../resolvers/message-search.ts';
import type { FoundMessage } from '../resolvers/message-search.ts';
import { validationFailed } from '../resolvers/errors.ts';
import { builder, withoutNulls } from './builder.ts';

const FoundMessageRef = builder.objectRef<FoundMessage>('FoundMessage').implement({
  description: 'A stored message a search found (docs/conversations.md, Search).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'the stored message (a message this API sent: its record id)' }),
    waMessageId: t.exposeString('waMessageId'),
    chatId: t.exposeString('chatId'),
    chatLid: t.exposeString('chatLid', { nullable: true }),
    direction: t.exposeString('direction', { description: 'in (received) or out (sent by this API, the phone or another device)' }),
    fromMe: t.exposeBoolean('fromMe'),
    sender: t.exposeString('sender'),
    senderLid: t.exposeString('senderLid', { nullable: true }),
    kind: t.exposeString('kind'),
    text: t.exposeString('text', { nullable: true, description: 'the latest text or caption (the edit when there is one)' }),
    editedAt: t.field({ type: 'DateTime', nullable: true, resolve: (m) => m.editedAt }),
    timestamp: t.field({ type: 'DateTime', description: "the network's time of the message", resolve: (m) => m.timestamp }),
    outgoingId: t.exposeID('outgoingId', { nullable: true, description: 'the outgoing record of a message this API sent' }),
  }),
});

builder.prismaObjectFields('Session', (t) => ({
  searchMessages: t.connection(
    {
      type: FoundMessageRef,
      description:
        "The session's stored messages whose latest text has every word of `query` (each as a word or the start of one), newest first; `from` (inclusive) and `to` (exclusive) bound the message's time. Pages forward: `first` and `after`.",
      args: {
        query: t.arg.string({ required: true }),
        chatId: t.arg.string(),
        from: t.arg({ type: 'DateTime' }),
        to: t.arg({ type: 'DateTime' }),
      },
      resolve: async (session, args, ctx) => {
        if (args.last != null || args.before != null)
          throw validationFailed([{ path: args.last != null ? 'last' : 'before', message: 'a search pages forward only (first, after)' }]);
        const page = await searchMessages(
          ctx,
          session.id,
          withoutNulls({ q: args.query, chatId: args.chatId, from: args.from, to: args.to, limit: args.first, cursor: args.after }),
        );
        const edges = page.items.map((node) => ({ node, cursor: encodeCursor(session.id, { at: node.timestamp, id: node.id }) }));
        return {
          edges,
          totalCount: page.total,
          pageInfo: {
            hasNextPage: page.nextCursor !== null,
            hasPreviousPage: args.after != null,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      },
    },
    { fields: (c) => ({ totalCount: c.int({ resolve: (connection) => connection.totalCount }) }) },
  ),
}));
