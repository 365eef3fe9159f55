import type { IncomingItem, IncomingMediaView } from '../runtime/ports/incoming.ts';
import type { SendAnswer } from '../resolvers/messages.ts';
import {
  buttonTypeSchema,
  editMessage,
  getMessageRow,
  mediaTypeSchema,
  messageHistoryQuery,
  messageStatusSchema,
  readIncoming,
  sendInteractive,
  sendMedia,
  sendRich,
  sendText,
  sendTyping,
} from '../resolvers/messages.ts';
import { RECEIPT_ORDER, receiptsFromRows } from '../resolvers/receipts.ts';
import type { ReceiptView } from '../resolvers/receipts.ts';
import { ownSession } from '../resolvers/sessions.ts';
import type { InputFields } from './builder.ts';
import { builder, dateOrNull, once, withoutNulls } from './builder.ts';

export const SendResultRef = builder.objectRef<SendAnswer>('SendResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    id: t.exposeID('id'),
    queued: t.boolean({ description: 'the send pacer queued it: it goes at sendAt', resolve: (a) => a.status === 'PENDING' }),
    sendAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'when a queued message goes',
      resolve: (a) => (a.sendAt ? new Date(a.sendAt) : null),
    }),
  }),
});

export const MessageReceipt = builder.objectRef<ReceiptView>('MessageReceipt').implement({
  description: 'Who acknowledged a message, and when (times set once, never moved)',
  fields: (t) => ({
    recipient: t.exposeString('recipient', { description: 'the phone-number JID when known, else the LID JID' }),
    recipientLid: t.exposeString('recipientLid', { nullable: true, description: "the recipient's LID, when the network told it" }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => dateOrNull(r.deliveredAt) }),
    readAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => dateOrNull(r.readAt) }),
    playedAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => dateOrNull(r.playedAt) }),
  }),
});

export const MessageStatusEnum = builder.enumType('MessageStatus', { values: messageStatusSchema.options });
export const MediaTypeEnum = builder.enumType('MediaType', { values: mediaTypeSchema.options });
const ButtonTypeEnum = builder.enumType('ButtonType', { values: buttonTypeSchema.options });

builder.prismaObject('OutgoingMessage', {
  description: 'One message sent (or being sent, or scheduled) by a session.',
  fields: (t) => ({
    id: t.exposeID('id'),
    sessionId: t.exposeID('sessionId'),
    session: t.relation('session'),
    toNumber: t.exposeString('toNumber'),
    content: t.exposeString('content'),
    kind: t.exposeString('kind', { description: 'text, image, video, audio, document, interactive, contact, location, poll, status' }),
    status: t.field({ type: MessageStatusEnum, select: { status: true }, resolve: (row) => messageStatusSchema.parse(row.status) }),
    error: t.exposeString('error', { nullable: true, description: 'Why a FAILED message failed.' }),
    waMessageId: t.exposeString('waMessageId', { nullable: true }),
    remoteJid: t.exposeString('remoteJid', { nullable: true }),
    toLid: t.exposeString('toLid', { nullable: true, description: "the recipient's LID beside toNumber, when the network told it" }),
    sendAt: t.expose('sendAt', { type: 'DateTime', nullable: true, description: 'When a scheduled message is due.' }),
    sentAt: t.expose('sentAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true, description: 'First delivered (in a group, to any member).' }),
    readAt: t.expose('readAt', { type: 'DateTime', nullable: true }),
    playedAt: t.expose('playedAt', { type: 'DateTime', nullable: true, description: 'A voice note played.' }),
    deletedAt: t.expose('deletedAt', { type: 'DateTime', nullable: true, description: 'When it was deleted for everyone.' }),
    receipts: t.field({
      type: [MessageReceipt],
      description: 'each group member that acknowledged it; for a 1:1 message, its recipient once delivered',
      // The group rows come with the record's own query, so a list of messages reads them in one statement.
      select: { toNumber: true, remoteJid: true, deliveredAt: true, readAt: true, playedAt: true, receipts: { orderBy: RECEIPT_ORDER } },
      resolve: (record) => receiptsFromRows(record, record.receipts),
    }),
  }),
});

export const IncomingMedia = builder.objectRef<IncomingMediaView>('IncomingMedia').implement({
  description: 'A received file. GET on `url` (with x-api-key) streams it, for the retention window (INCOMING_MEDIA_RETENTION_MS).',
  fields: (t) => ({
    mimetype: t.exposeString('mimetype'),
    size: t.exposeInt('size', { description: 'bytes of the decrypted file' }),
    fileName: t.exposeString('fileName', { nullable: true, description: 'as the sender named it; null when it gave none' }),
    url: t.exposeString('url', { description: 'our REST URL of the file: path-relative (/v1/...), or absolute when PUBLIC_URL is set' }),
  }),
});

const IncomingMessage = builder.objectRef<IncomingItem>('IncomingMessage').implement({
  fields: (t) => ({
    eventId: t.exposeInt('eventId'),
    sessionId: t.exposeID('sessionId'),
    chatId: t.exposeString('chatId'),
    chatLid: t.exposeString('chatLid', {
      nullable: true,
      description: "the chat's LID beside its phone-number JID, when the network told it",
    }),
    from: t.exposeString('from', { description: 'the phone-number JID when known, else the LID JID' }),
    fromLid: t.exposeString('fromLid', { nullable: true, description: "the sender's LID, when the network told it" }),
    fromMe: t.exposeBoolean('fromMe'),
    type: t.exposeString('type'),
    content: t.exposeString('content'),
    pushName: t.exposeString('pushName'),
    messageTimestamp: t.exposeInt('messageTimestamp'),
    receivedAt: t.field({ type: 'DateTime', resolve: (item) => new Date(item.receivedAt) }),
    waMessageId: t.exposeString('waMessageId', { description: "the network's id of the message, to react to it or quote it" }),
    media: t.field({
      type: IncomingMedia,
      nullable: true,
      description: 'set on messages that carry a file',
      resolve: (m) => m.media ?? null,
    }),
    waitingSince: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'the message first arrived undecryptable: when its message.waiting (same waMessageId) was raised',
      resolve: (m) => (m.waitingSince ? new Date(m.waitingSince) : null),
    }),
  }),
});

const IncomingPage = builder.objectRef<{ count: number; consumed: boolean; items: IncomingItem[] }>('IncomingPage').implement({
  fields: (t) => ({
    count: t.exposeInt('count'),
    consumed: t.exposeBoolean('consumed'),
    items: t.field({ type: [IncomingMessage], resolve: (p) => p.items }),
  }),
});

/** A send's reply fields (extensions), shared by every kind of send. */
export const replyInputFields = (t: InputFields) => ({
  quotedMessageId: t.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
  mentions: t.stringList({ description: 'people mentioned, by number (digits) or JID (phone-number or LID)' }),
});

/** The media fields of a send, shared by 1:1 and group sends. */
export const mediaFields = (t: InputFields) => ({
  mediaType: t.field({ type: MediaTypeEnum, required: true }),
  url: t.string({ required: true }),
  mimetype: t.string(),
  caption: t.string(),
  filename: t.string(),
  ptt: t.boolean(),
  ...replyInputFields(t),
});

const MediaInput = builder.inputType('MediaInput', {
  fields: (t) => ({ to: t.string({ required: true }), ...mediaFields(t) }),
});

export const ButtonInput = builder.inputType('ButtonInput', {
  fields: (t) => ({
    type: t.field({ type: ButtonTypeEnum, required: true }),
    text: t.string({ required: true }),
    id: t.string(),
    url: t.string(),
    phoneNumber: t.string(),
    copyCode: t.string(),
  }),
});

const SectionRowInput = builder.inputType('SectionRowInput', {
  fields: (t) => ({ title: t.string({ required: true }), rowId: t.string({ required: true }), description: t.string() }),
});

export const SectionInput = builder.inputType('SectionInput', {
  fields: (t) => ({ title: t.string(), rows: t.field({ type: [SectionRowInput] }) }),
});

const InteractiveInput = builder.inputType('InteractiveInput', {
  fields: (t) => ({
    chatId: t.string({ required: true }),
    body: t.string({ required: true }),
    header: t.string(),
    footer: t.string(),
    buttons: t.field({ type: [ButtonInput] }),
    sections: t.field({ type: [SectionInput] }),
    ...replyInputFields(t),
  }),
});

const RichInput = builder.inputType('RichInput', {
  fields: (t) => ({
    to: t.string({ required: true }),
    isGroup: t.boolean(),
    documentUrl: t.string(),
    fileName: t.string(),
    mimetype: t.string(),
    contactName: t.string(),
    contactPhone: t.string(),
    latitude: t.float(),
    longitude: t.float(),
    locationName: t.string(),
    locationAddress: t.string(),
    quotedMessageId: t.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
  }),
});

/** Nested inputs also arrive with explicit nulls for omitted fields. */
export const cleanButtons = <T extends { buttons?: Array<object> | null }>(input: T) => ({
  ...withoutNulls(input),
  ...(input.buttons ? { buttons: input.buttons.map(withoutNulls) } : {}),
});

builder.prismaObjectFields('Session', (t) => ({
  messages: t.relatedConnection('messages', {
    cursor: 'id',
    totalCount: true,
    description: 'Messages sent by this session, newest first; totalCount counts those the filters match.',
    args: { status: t.arg({ type: MessageStatusEnum }), to: t.arg.string() },
    query: (args) => messageHistoryQuery({ status: args.status ?? undefined, to: args.to ?? undefined }),
  }),
  incoming: t.field({
    type: IncomingPage,
    description: "Messages received, oldest first, from the session's incoming buffer (consumed unless consume: false).",
    args: { limit: t.arg.int(), waitMs: t.arg.int(), consume: t.arg.boolean() },
    resolve: (row, args, ctx) => readIncoming(ctx, row.id, withoutNulls(args)),
  }),
}));

builder.queryField('message', (t) =>
  t.prismaField({
    type: 'OutgoingMessage',
    args: { sessionId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => getMessageRow(ctx, String(args.sessionId), String(args.id), query),
  }),
);

builder.mutationFields((t) => ({
  sendText: t.field({
    type: SendResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      to: t.arg.string({ required: true }),
      message: t.arg.string({ required: true }),
      quotedMessageId: t.arg.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
      mentions: t.arg.stringList({ description: 'people mentioned, by number (digits) or JID (phone-number or LID)' }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, { sessionId, ...args }) => sendText(ctx, String(sessionId), withoutNulls(args))),
  }),
  sendMedia: t.field({
    type: SendResultRef,
    args: { idempotencyKey: t.arg.string(), sessionId: t.arg.id({ required: true }), input: t.arg({ type: MediaInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => sendMedia(ctx, String(args.sessionId), withoutNulls(args.input))),
  }),
  sendInteractive: t.field({
    type: SendResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      input: t.arg({ type: InteractiveInput, required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => sendInteractive(ctx, String(args.sessionId), cleanButtons(args.input))),
  }),
  sendRich: t.field({
    type: SendResultRef,
    args: { idempotencyKey: t.arg.string(), sessionId: t.arg.id({ required: true }), input: t.arg({ type: RichInput, required: true }) },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => sendRich(ctx, String(args.sessionId), withoutNulls(args.input))),
  }),
  sendTyping: t.field({
    type: 'Boolean',
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      to: t.arg.string({ required: true }),
      text: t.arg.string({ required: true }),
      delayMs: t.arg.int(),
      isGroup: t.arg.boolean(),
      quotedMessageId: t.arg.string({ description: 'a reply quoting a message this session sent (record id) or received (waMessageId)' }),
      mentions: t.arg.stringList({ description: 'people mentioned, by number (digits) or JID (phone-number or LID)' }),
    },
    resolve: async (_root, args, ctx, info) =>
      (await once(ctx, info, args, (ctx, { sessionId, ...args }) => sendTyping(ctx, String(sessionId), withoutNulls(args)))).ok,
  }),
  editMessage: t.field({
    type: SendResultRef,
    args: {
      idempotencyKey: t.arg.string(),
      sessionId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
      text: t.arg.string({ required: true }),
    },
    resolve: (_root, args, ctx, info) =>
      once(ctx, info, args, (ctx, args) => editMessage(ctx, String(args.sessionId), String(args.id), { text: args.text })),
  }),
}));

builder.subscriptionField('incomingMessages', (t) =>
  t.field({
    type: IncomingMessage,
    description: 'Each message the session receives, as it arrives (the same items the incoming buffer holds).',
    args: { sessionId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      await ownSession(ctx, String(args.sessionId));
      return ctx.events.subscribe('incoming', String(args.sessionId));
    },
    resolve: (item) => item,
  }),
);
