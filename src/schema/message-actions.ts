import type { MessageUpdate, MessageWaiting } from '../runtime/ports/events.ts';
import type { DeleteAnswer, ReactAnswer } from '../resolvers/message-actions.ts';
import { deleteMessage, reactToMessage } from '../resolvers/message-actions.ts';
import { ownSession } from '../resolvers/sessions.ts';
import { builder, once } from './builder.ts';

const ReactResult = builder.objectRef<ReactAnswer>('ReactResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    waMessageId: t.exposeString('waMessageId', { description: 'the network id of the reaction itself' }),
    emoji: t.exposeString('emoji', { description: 'the emoji sent; "" when the reaction was removed' }),
    messageId: t.exposeID('messageId', { nullable: true, description: "the message reacted to: our record's id when we sent it" }),
    targetWaMessageId: t.exposeString('targetWaMessageId', { description: 'the network id of the message reacted to' }),
  }),
});

const DeleteResult = builder.objectRef<DeleteAnswer>('DeleteMessageResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    id: t.exposeID('id'),
    deletedAt: t.field({ type: 'DateTime', resolve: (r) => new Date(r.deletedAt) }),
  }),
});

const MessageUpdateType = builder.enumType('MessageUpdateType', {
  values: { REACTION: { value: 'message.reaction' }, EDITED: { value: 'message.edited' }, DELETED: { value: 'message.deleted' } } as const,
});

const MessageTarget = builder.objectRef<MessageUpdate['target']>('MessageTarget').implement({
  description: 'The message a reaction, an edit or a delete is about.',
  fields: (t) => ({
    waMessageId: t.exposeString('waMessageId'),
    messageId: t.exposeID('messageId', { nullable: true, description: "our record's id when it is a message this session sent" }),
    chatId: t.exposeString('chatId'),
  }),
});

const MessageUpdateRef = builder.objectRef<MessageUpdate>('MessageUpdate').implement({
  description: 'A reaction, an edit or a delete the session received (the webhooks message.reaction, message.edited, message.deleted).',
  fields: (t) => ({
    type: t.field({ type: MessageUpdateType, resolve: (u) => u.type }),
    sessionId: t.exposeID('sessionId'),
    chatId: t.exposeString('chatId'),
    chatLid: t.exposeString('chatLid', { nullable: true }),
    from: t.exposeString('from', { description: 'the phone-number JID when known, else the LID JID' }),
    fromLid: t.exposeString('fromLid', { nullable: true }),
    fromMe: t.exposeBoolean('fromMe'),
    waMessageId: t.exposeString('waMessageId', { description: 'the network id of the reaction, edit or delete itself' }),
    emoji: t.exposeString('emoji', { nullable: true, description: 'a reaction\'s emoji; "" when a reaction was removed' }),
    text: t.exposeString('text', { nullable: true, description: "an edit's new text" }),
    target: t.field({ type: MessageTarget, resolve: (u) => u.target }),
    messageTimestamp: t.exposeInt('messageTimestamp'),
    receivedAt: t.field({ type: 'DateTime', resolve: (u) => new Date(u.receivedAt) }),
  }),
});

builder.mutationFields((t) => ({
  reactToMessage: t.field({
    type: ReactResult,
    description: 'React to a message this session sent (record id) or received (waMessageId); emoji "" removes the reaction.',
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      messageId: t.arg.id({ required: true }),
      emoji: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => reactToMessage(ctx, String(args.sessionId), String(args.messageId), { emoji: args.emoji })),
  }),
  deleteMessage: t.field({
    type: DeleteResult,
    description: 'Delete a message this session sent, for everyone; the record stays, with deletedAt.',
    args: { idempotencyKey: t.arg.string(), sessionId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx, info) => once(ctx, info, args, (ctx, args) => deleteMessage(ctx, String(args.sessionId), String(args.id))),
  }),
}));

builder.subscriptionField('messageUpdates', (t) =>
  t.field({
    type: MessageUpdateRef,
    description: 'Each reaction, edit and delete the session receives, pointing at the message it is about.',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('messageUpdates', String(args.sessionId));
    },
    resolve: (update) => update,
  }),
);

const MessageWaitingRef = builder.objectRef<MessageWaiting>('MessageWaiting').implement({
  description:
    'A message the session could not decrypt yet (the message.waiting webhook); when its resend arrives, that message carries waitingSince and the same waMessageId.',
  fields: (t) => ({
    sessionId: t.exposeID('sessionId'),
    waMessageId: t.exposeString('waMessageId', { description: 'the network id the message will arrive under' }),
    chatId: t.exposeString('chatId'),
    chatLid: t.exposeString('chatLid', { nullable: true }),
    from: t.exposeString('from', { description: 'the phone-number JID when known, else the LID JID' }),
    fromLid: t.exposeString('fromLid', { nullable: true }),
    fromMe: t.exposeBoolean('fromMe'),
    messageTimestamp: t.exposeInt('messageTimestamp', { description: 'when it was sent, as the network stamped it (Unix seconds)' }),
    at: t.field({ type: 'DateTime', description: 'when the session found it could not decrypt it', resolve: (w) => new Date(w.at) }),
  }),
});

builder.subscriptionField('waitingMessages', (t) =>
  t.field({
    type: MessageWaitingRef,
    description: 'Each received message the session cannot decrypt yet ("waiting for this message").',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('messageWaiting', String(args.sessionId));
    },
    resolve: (waiting) => waiting,
  }),
);
