import { filter, map, pipe } from 'graphql-yoga';
import type { ChatNode, ChatView, ReactionView, ReceiptsView, StoredMessageView } from '../resolvers/conversations.ts';
import {
  CHAT_KINDS,
  chatsPage,
  chatViewOf,
  countChats,
  getChat,
  getStoredMessage,
  countChatMessages,
  messagesPage,
  storedMessageViewOf,
} from '../resolvers/conversations.ts';
import { DomainError } from '../resolvers/errors.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../resolvers/paging.ts';
import { ownSession } from '../resolvers/sessions.ts';
import { builder, dateOf, dateOrNull } from './builder.ts';
import { IncomingMedia, MessageReceipt, MessageStatusEnum } from './messages.ts';

const ChatKindEnum = builder.enumType('ChatKind', {
  description: "A chat's kind, by its JID",
  values: CHAT_KINDS,
});

const MessageDirection = builder.enumType('MessageDirection', {
  description: 'in: received; out: sent by this API, or from the phone or another device of the account',
  values: ['in', 'out'] as const,
});

const Reaction = builder.objectRef<ReactionView>('Reaction').implement({
  description: "A person's current reaction to a message (a later one replaces it)",
  fields: (t) => ({
    reactor: t.exposeString('reactor', { description: 'the phone-number JID when known, else the LID JID' }),
    reactorLid: t.exposeString('reactorLid', { nullable: true }),
    emoji: t.exposeString('emoji'),
    reactedAt: t.field({ type: 'DateTime', resolve: (r) => dateOf(r.reactedAt) }),
  }),
});

const MessageReceipts = builder.objectRef<ReceiptsView>('MessageReceipts').implement({
  description: 'The receipts of a message this API sent: its record, the first times, and per member in a group',
  fields: (t) => ({
    messageId: t.exposeID('messageId', {
      description: 'the outgoing record (OutgoingMessage, GET /v1/sessions/{id}/messages/{messageId})',
    }),
    status: t.field({ type: MessageStatusEnum, resolve: (r) => r.status as 'PENDING' | 'SENT' | 'FAILED' }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => dateOrNull(r.deliveredAt) }),
    readAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => dateOrNull(r.readAt) }),
    playedAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => dateOrNull(r.playedAt) }),
    recipients: t.field({ type: [MessageReceipt], description: 'per group member; empty for a 1:1 message', resolve: (r) => r.recipients }),
  }),
});

export const StoredMessage = builder.objectRef<StoredMessageView>('Message');

StoredMessage.implement({
  description: 'A stored message, sent or received (docs/conversations.md)',
  fields: (t) => ({
    id: t.exposeID('id', { description: "our id; for a message this API sent, its outgoing record's id" }),
    waMessageId: t.exposeString('waMessageId', { description: "the network's id" }),
    direction: t.field({ type: MessageDirection, resolve: (m) => m.direction }),
    chatId: t.exposeString('chatId'),
    chatLid: t.exposeString('chatLid', { nullable: true }),
    sender: t.exposeString('sender', { description: 'the phone-number JID when known, else the LID JID' }),
    senderLid: t.exposeString('senderLid', { nullable: true }),
    fromMe: t.exposeBoolean('fromMe'),
    kind: t.exposeString('kind', { description: 'text, image, video, audio, document, sticker, location, contact, poll...' }),
    text: t.exposeString('text', { nullable: true, description: 'the text or caption; null after a delete for everyone' }),
    quotedId: t.exposeString('quotedId', { nullable: true, description: 'a reply: the network id of the message it quotes' }),
    quoted: t.field({
      type: StoredMessage,
      nullable: true,
      description: 'the quoted message when the store holds it (its own quoted is not loaded: follow quotedId)',
      resolve: (m) => m.quoted,
    }),
    mentions: t.exposeStringList('mentions'),
    timestamp: t.field({ type: 'DateTime', description: "the network's time of the message", resolve: (m) => dateOf(m.timestamp) }),
    editedText: t.exposeString('editedText', { nullable: true, description: 'the latest edit' }),
    editedAt: t.field({ type: 'DateTime', nullable: true, resolve: (m) => dateOrNull(m.editedAt) }),
    deletedAt: t.field({ type: 'DateTime', nullable: true, resolve: (m) => dateOrNull(m.deletedAt) }),
    source: t.exposeString('source', { description: 'live, or history (a history sync from the phone)' }),
    media: t.field({
      type: IncomingMedia,
      nullable: true,
      description: 'a received file, while its record is kept',
      resolve: (m) => m.media,
    }),
    reactions: t.field({ type: [Reaction], resolve: (m) => m.reactions }),
    receipts: t.field({
      type: MessageReceipts,
      nullable: true,
      description: 'for a message this API sent; null otherwise',
      resolve: (m) => m.receipts,
    }),
  }),
});

/** Forward paging only: newest first, `first` and `after`. */
const forward = (args: { first?: number | null; after?: string | null; last?: number | null; before?: string | null }) => {
  if (args.last != null || args.before != null) {
    throw new DomainError('VALIDATION_FAILED', 'The request is not valid', {
      details: [{ path: args.last != null ? 'last' : 'before', message: 'page forward with first and after (lists are newest first)' }],
    });
  }
  if (args.first != null && args.first < 1) {
    throw new DomainError('VALIDATION_FAILED', 'The request is not valid', { details: [{ path: 'first', message: 'must be at least 1' }] });
  }
  return {
    limit: Math.min(args.first ?? DEFAULT_LIMIT, MAX_LIMIT),
    ...(args.after != null ? { cursor: args.after, cursorPath: 'after' } : {}),
  };
};

/** The edges of a page, each cursor made only when a client asks for it (see WithCursors). */
const edgesOf = <T>(nodes: T[], cursorAt: (index: number) => string) =>
  nodes.map((node, i) => ({
    node,
    get cursor() {
      return cursorAt(i);
    },
  }));

const pageInfo = (items: { cursor: string }[], nextCursor: string | null) => ({
  hasNextPage: nextCursor !== null,
  hasPreviousPage: false,
  get startCursor() {
    return items[0]?.cursor ?? null;
  },
  get endCursor() {
    return items.at(-1)?.cursor ?? null;
  },
});

export const ChatRef = builder.objectRef<ChatNode>('Chat');

ChatRef.implement({
  description: "One of a session's chats (docs/conversations.md)",
  fields: (t) => ({
    id: t.exposeID('id', { description: "the chat's JID: a person's phone-number JID where known (else LID), a group, a channel" }),
    lid: t.exposeString('lid', { nullable: true }),
    kind: t.field({ type: ChatKindEnum, resolve: (c) => c.kind }),
    name: t.string({
      nullable: true,
      description: "the account's saved contact name, else the person's push name; a group's subject; null when none is known",
      resolve: (c) => c.name,
    }),
    lastMessage: t.field({ type: StoredMessage, nullable: true, resolve: (c) => c.lastMessage }),
    lastActivity: t.field({ type: 'DateTime', description: 'the time of its latest message', resolve: (c) => dateOf(c.lastActivity) }),
    unreadCount: t.exposeInt('unreadCount', { description: 'messages received since the chat was last read or written in' }),
    lastReadAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => dateOrNull(c.lastReadAt) }),
    archived: t.exposeBoolean('archived', { description: 'archived on a device of the account (app state, once the link has synced it)' }),
    pinned: t.exposeBoolean('pinned', { description: 'pinned on a device of the account (app state, once the link has synced it)' }),
    muted: t.exposeBoolean('muted', {
      description: 'muted on a device of the account, when the change came (app state, once the link has synced it)',
    }),
    messages: t.connection(
      {
        type: StoredMessage,
        description: "The chat's messages, both directions, newest first.",
        args: {
          since: t.arg({ type: 'DateTime', description: 'only messages newer than this time' }),
          until: t.arg({ type: 'DateTime', description: 'only messages older than this time' }),
        },
        resolve: async (chat, { since, until, ...args }, ctx) => {
          const filters = { ...(until ? { before: until } : {}), ...(since ? { after: since } : {}) };
          const page = await messagesPage(ctx, chat.sessionId, chat.id, filters, forward(args));
          const edges = edgesOf(page.messages, page.cursorAt);
          return { edges, pageInfo: pageInfo(edges, page.nextCursor), filters, sessionId: chat.sessionId, chatId: chat.id };
        },
      },
      {
        fields: (c) => ({
          totalCount: c.int({
            description: 'messages of the chat that match since and until, on every page',
            resolve: (connection, _args, ctx) => countChatMessages(ctx, connection.sessionId, connection.chatId, connection.filters),
          }),
        }),
      },
    ),
  }),
});

builder.prismaObjectFields('Session', (t) => ({
  chats: t.connection(
    {
      type: ChatRef,
      description: "The session's chats, latest activity first (docs/conversations.md).",
      args: {
        unread: t.arg.boolean({ description: 'true: only chats with unread messages; false: only those without' }),
        archived: t.arg.boolean({ description: 'true: only archived chats; false: only the others' }),
        kind: t.arg({ type: ChatKindEnum }),
      },
      resolve: async (session, { unread, archived, kind, ...args }, ctx) => {
        const filters = { ...(unread != null ? { unread } : {}), ...(archived != null ? { archived } : {}), ...(kind ? { kind } : {}) };
        const page = await chatsPage(ctx, session.id, filters, forward(args));
        const edges = edgesOf(page.chats, page.cursorAt);
        return { edges, pageInfo: pageInfo(edges, page.nextCursor), filters, sessionId: session.id };
      },
    },
    {
      fields: (c) => ({
        totalCount: c.int({
          description: 'chats that match the filters, on every page',
          resolve: (connection, _args, ctx) => countChats(ctx, connection.sessionId, connection.filters),
        }),
      }),
    },
  ),
  chat: t.field({
    type: ChatRef,
    description: 'One chat, by its JID (or LID, or a number).',
    args: { id: t.arg.string({ required: true }) },
    resolve: (session, args, ctx) => getChat(ctx, session.id, args.id),
  }),
  message: t.field({
    type: StoredMessage,
    description: 'Any stored message of the session, in or out, by our id or its network id.',
    args: { id: t.arg.string({ required: true }) },
    resolve: (session, args, ctx) => getStoredMessage(ctx, session.id, args.id),
  }),
}));

builder.queryFields((t) => ({
  storedMessage: t.field({
    type: StoredMessage,
    description: 'Any stored message of a session, in or out, by our id or its network id (as Session.message).',
    args: { sessionId: t.arg.id({ required: true }), id: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => getStoredMessage(ctx, String(args.sessionId), args.id),
  }),
}));

builder.subscriptionFields((t) => ({
  chatUpdates: t.field({
    type: ChatRef,
    description: "A session's chats as they move: a message stored either way, a read mark. Each is the chat as it is now.",
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const sessionId = String(args.sessionId);
      await ownSession(ctx, sessionId);
      return pipe(
        ctx.events.subscribe('chatUpdates', sessionId),
        map((change) => chatViewOf(ctx, sessionId, change.chatId)),
        filter((chat): chat is ChatView => chat !== null),
      );
    },
    resolve: (chat) => chat,
  }),
  storedMessageUpdates: t.field({
    type: StoredMessage,
    description:
      "A session's stored messages as they are stored (received, or sent through the API) or change (a reaction, an edit, a delete, a receipt of ours); optionally of one chat. Each is the message as it is now.",
    args: { sessionId: t.arg.id({ required: true }), chatId: t.arg.string() },
    subscribe: async (_root, args, ctx) => {
      const sessionId = String(args.sessionId);
      await ownSession(ctx, sessionId);
      const chatId = args.chatId ?? null;
      return pipe(
        ctx.events.subscribe('storedMessages', sessionId),
        filter((change) => chatId === null || change.chatId === chatId),
        map((change) => storedMessageViewOf(ctx, sessionId, change.waMessageId)),
        filter((message): message is StoredMessageView => message !== null),
      );
    },
    resolve: (message) => message,
  }),
}));
