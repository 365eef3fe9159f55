import { z } from 'zod';
import type { OutgoingMessage, Prisma } from '../generated/sqlite/client.ts';
import type { IncomingItem } from '../runtime/ports/incoming.ts';
import type { ButtonSpec, MediaType, NetworkLink, ReplyContext } from '../runtime/ports/network.ts';
import type { RequestContext } from './context.ts';
import { deliverAfter, deliverNow, requireLink } from './delivery.ts';
import type { Delivery } from './delivery.ts';
import { DomainError, notFound } from './errors.ts';
import { JID_MESSAGE, jidSchema, toJid } from './jids.ts';
import { bySetting, httpUrl, mediaUrlSchema } from './media-urls.ts';
import { integerInput, limitSchema } from './paging.ts';
import { ownSessionId } from './sessions.ts';
import { parseInput } from './validate.ts';
import { admit } from './idempotency.ts';
import { showTyping } from './pacing.ts';
import { replyContext, replyFields } from './message-actions.ts';

export interface MessageRecordView {
  id: string;
  sessionId: string;
  toNumber: string;
  content: string;
  status: string;
  sentAt: string | null;
  createdAt: string;
  waMessageId: string | null;
  remoteJid: string | null;
  /** the recipient's LID beside toNumber (beyond the spec), when the network told it; null for groups and before the send */
  toLid: string | null;
  /** why a FAILED message failed (beyond the spec) */
  error: string | null;
  /** receipts (beyond the spec): first delivered, read and played (voice notes) times; in a group, any member's */
  deliveredAt: string | null;
  readAt: string | null;
  playedAt: string | null;
  /** when it was deleted for everyone (beyond the spec) */
  deletedAt: string | null;
  /** when a PENDING message goes: a scheduled one's time, or a paced one's slot (beyond the spec) */
  sendAt: string | null;
}

export const messageView = (row: OutgoingMessage): MessageRecordView => ({
  id: row.id,
  sessionId: row.sessionId,
  toNumber: row.toNumber,
  content: row.content,
  status: row.status,
  sentAt: row.sentAt ? row.sentAt.toISOString() : null,
  createdAt: row.createdAt.toISOString(),
  waMessageId: row.waMessageId,
  remoteJid: row.remoteJid,
  toLid: row.toLid,
  error: row.error,
  deliveredAt: row.deliveredAt ? row.deliveredAt.toISOString() : null,
  readAt: row.readAt ? row.readAt.toISOString() : null,
  playedAt: row.playedAt ? row.playedAt.toISOString() : null,
  deletedAt: row.deletedAt ? row.deletedAt.toISOString() : null,
  sendAt: row.sendAt ? row.sendAt.toISOString() : null,
});

export interface SendAnswer {
  ok: true;
  id: string;
  /** beyond the spec: a paced message waiting for its slot is PENDING until sendAt */
  status?: 'PENDING';
  sendAt?: string;
}

/** A send's answer: the record's id, and for a message the pacer queued, when it goes. */
export const sendAnswer = (row: Pick<OutgoingMessage, 'id' | 'status' | 'sendAt'>): SendAnswer =>
  row.status === 'PENDING' && row.sendAt
    ? { ok: true, id: row.id, status: 'PENDING', sendAt: row.sendAt.toISOString() }
    : { ok: true, id: row.id };

const text = z.string().min(1, 'cannot be empty').max(65_536);

/**
 * The furthest ahead anything may be timed: a schedule's `delayMs` or `sendAt`, a recurring `everyMs`
 * (messages and statuses). Beyond it is a 400.
 */
export const MAX_HORIZON_MS = 365 * 24 * 3600 * 1000;

/** A duration the spec types as a number: any finite number from 0, fractions rounded to whole ms. */
export const durationMsSchema = ({ min = 0, max, required = 'is required' }: { min?: number; max?: number; required?: string } = {}) => {
  const ms = z
    .number({ error: (issue) => (issue.input === undefined ? required : 'must be a number of milliseconds') })
    .min(min, `must be at least ${min}`);
  return (max === undefined ? ms : ms.max(max, `must be at most ${max}`)).transform((n) => Math.round(n));
};

/** `to` plus `isGroup`, as docs/api-reference.md#conventions reads recipients: digits become a user or, with isGroup, a group JID. */
export const recipientShape = { to: z.string().trim().min(1, 'is required'), isGroup: z.boolean().optional() };
export const checkRecipient = (v: { to: string; isGroup?: boolean }, ctx: z.RefinementCtx): void => {
  if (!toJid(v.to, v.isGroup === true)) ctx.addIssue({ code: 'custom', path: ['to'], message: JID_MESSAGE });
};
export const withJid = <T extends { to: string; isGroup?: boolean }>(v: T): T & { jid: string } => ({
  ...v,
  jid: toJid(v.to, v.isGroup === true) ?? v.to,
});

export const sendSchema = z.object({ to: jidSchema, message: text, ...replyFields });
/** The shortcut routes carry the session in the body: checked with the rest, so every fault is listed at once. */
export const shortcutSendSchema = z.object({ sessionId: z.string().min(1, 'is required'), ...sendSchema.shape });
/** A media message's fields; group sends take the same, with the group from the path instead of `to`. */
/** The kinds of media a send takes (MediaType in GraphQL). */
export const mediaTypeSchema = z.enum(['image', 'video', 'audio', 'document']);
/** Button types; `phone` is the alias of `call` (docs/api-reference.md). ButtonType in GraphQL. */
export const buttonTypeSchema = z.enum(['reply', 'url', 'call', 'phone', 'copy']);
/** The statuses of an outgoing message record (MessageStatus in GraphQL). */
export const messageStatusSchema = z.enum(['PENDING', 'SENT', 'FAILED']);
const mediaShape = (allowPrivate: boolean) => ({
  mediaType: mediaTypeSchema,
  url: mediaUrlSchema(allowPrivate),
  mimetype: z
    .string()
    .regex(/^[\w.+-]+\/[\w.+-]+/, 'must be a MIME type like image/jpeg')
    .optional(),
  caption: z.string().max(4096).optional(),
  filename: z.string().min(1).max(255).optional(),
  ptt: z.boolean().optional(),
  ...replyFields,
});
const pttOnlyForAudio = (v: { ptt?: boolean; mediaType: string; mentions?: string[] }, ctx: z.RefinementCtx): void => {
  if (v.ptt && v.mediaType !== 'audio') ctx.addIssue({ code: 'custom', path: ['ptt'], message: 'only applies to audio' });
  // WhatsApp shows mentions in a caption, which audio has not
  if (v.mentions && v.mediaType === 'audio') {
    ctx.addIssue({ code: 'custom', path: ['mentions'], message: 'only apply to an image, a video or a document (their caption)' });
  }
};
export const mediaSchema = bySetting((allowPrivate) =>
  z.object({ to: jidSchema, ...mediaShape(allowPrivate) }).superRefine(pttOnlyForAudio),
);
export const groupMediaSchema = bySetting((allowPrivate) => z.object(mediaShape(allowPrivate)).superRefine(pttOnlyForAudio));

const buttonSchema = z
  .object({
    type: buttonTypeSchema.transform((t) => (t === 'phone' ? 'call' : t)),
    text: z.string().min(1, 'must be 1 to 20 characters').max(20, 'must be 1 to 20 characters'),
    id: z.string().min(1).max(256).optional(),
    url: httpUrl.optional(),
    phoneNumber: z
      .string()
      .regex(/^\d{6,15}$/, 'must be 6 to 15 digits')
      .optional(),
    copyCode: z.string().min(1).max(512).optional(),
  })
  .superRefine((b, ctx) => {
    const required = { reply: null, url: 'url', call: 'phoneNumber', copy: 'copyCode' } as const;
    const field = required[b.type];
    if (field && b[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required for a ${b.type} button` });
  });

const sectionSchema = z.object({
  title: z.string().optional(),
  rows: z.array(z.object({ title: z.string(), rowId: z.string(), description: z.string().optional() })).optional(),
});

const interactiveFields = {
  ...replyFields,
  body: text,
  header: z.string().max(60).optional(),
  footer: z.string().max(60, 'must be at most 60 characters').optional(),
  buttons: z.array(buttonSchema).min(1, 'must hold 1 to 3 buttons').max(3, 'must hold 1 to 3 buttons').optional(),
  sections: z.array(sectionSchema).optional(),
};
const requireButtons = (v: { buttons?: unknown[]; sections?: unknown[] }, ctx: z.RefinementCtx) => {
  if (!v.buttons && !v.sections) ctx.addIssue({ code: 'custom', path: ['buttons'], message: 'is required (1 to 3 buttons)' });
};
export const interactiveSchema = z.object({ chatId: jidSchema, ...interactiveFields }).superRefine(requireButtons);
export const groupInteractiveSchema = z.object(interactiveFields).superRefine(requireButtons);

export const richSchema = bySetting((allowPrivate) =>
  z
    .object({
      ...recipientShape,
      documentUrl: mediaUrlSchema(allowPrivate).optional(),
      fileName: z.string().min(1).max(255).optional(),
      mimetype: z.string().optional(),
      contactName: z.string().min(1).max(200).optional(),
      contactPhone: z
        .string()
        .regex(/^\d{5,20}$/, 'must be digits, without + or spaces')
        .optional(),
      latitude: z.number().min(-90).max(90).optional(),
      longitude: z.number().min(-180).max(180).optional(),
      locationName: z.string().max(200).optional(),
      locationAddress: z.string().max(500).optional(),
      quotedMessageId: replyFields.quotedMessageId,
    })
    .superRefine((v, ctx) => {
      checkRecipient(v, ctx);
      const kinds = [
        v.documentUrl !== undefined || v.fileName !== undefined ? 'document' : null,
        v.contactName !== undefined || v.contactPhone !== undefined ? 'contact' : null,
        v.latitude !== undefined || v.longitude !== undefined ? 'location' : null,
      ].filter(Boolean);
      if (kinds.length !== 1) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `exactly one of a document (documentUrl), a contact (contactName, contactPhone) or a location (latitude, longitude) is required; got ${kinds.length === 0 ? 'none' : kinds.join(' and ')}`,
        });
        return;
      }
      const need = (field: keyof typeof v, what: string) => {
        if (v[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required for a ${what}` });
      };
      if (kinds[0] === 'document') need('documentUrl', 'document');
      if (kinds[0] === 'contact') {
        need('contactName', 'contact');
        need('contactPhone', 'contact');
      }
      if (kinds[0] === 'location') {
        need('latitude', 'location');
        need('longitude', 'location');
      }
    })
    .transform(withJid),
);

export const typingSchema = z
  .object({ ...recipientShape, text, delayMs: durationMsSchema().default(1000), ...replyFields })
  .superRefine(checkRecipient)
  .transform(withJid);
export const editSchema = z.object({ text });
export const historySchema = z.object({
  limit: limitSchema,
  status: messageStatusSchema.optional(),
  to: jidSchema.optional(),
});
/** A session's history in GraphQL: the filters of GET /messages; the page comes from the connection. */
const historyFilterSchema = historySchema.omit({ limit: true });

/** Newest first, as REST lists a session's messages; a connection's cursor pages through this order. */
export const MESSAGE_ORDER = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.OutgoingMessageOrderByWithRelationInput[];

/**
 * The filter and order of a session's messages for plugin-prisma's relation loading (Session.messages):
 * validated as GET /messages validates `status` and `to`.
 */
export const messageHistoryQuery = (input: unknown) => {
  const { status, to } = parseInput(historyFilterSchema, input);
  return { where: { ...(status ? { status } : {}), ...recipientFilter(to) }, orderBy: MESSAGE_ORDER };
};

/** `to` finds a record by its recipient's address or by the LID beside it, so a LID finds what was sent by number too. */
const recipientFilter = (to: string | undefined): Prisma.OutgoingMessageWhereInput =>
  to ? { OR: [{ toNumber: to }, ...(to.endsWith('@lid') ? [{ toLid: to }] : [])] } : {};
const booleanQuery = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')]);
export const incomingSchema = z.object({
  limit: limitSchema,
  waitMs: integerInput(0)
    .default(0)
    .transform((n) => Math.min(n, 30_000)),
  consume: booleanQuery.default(true),
});

const answer = sendAnswer;

/** A text, as a reply when it quotes a message (found before anything is sent: an unknown one is a 404). */
export const textDelivery = async (
  ctx: RequestContext,
  sessionId: string,
  to: string,
  message: string,
  extras: { quotedMessageId?: string; mentions?: string[] } = {},
): Promise<Delivery> => ({
  to,
  content: { kind: 'text', text: message, ...(await replyContext(ctx, sessionId, extras)) },
  summary: message,
  kind: 'text',
});

type ReplyInput = { quotedMessageId?: string; mentions?: string[] };

const deliverText = async (ctx: RequestContext, sessionId: string, to: string, message: string, extras: ReplyInput) => {
  const session = await ownSessionId(ctx, sessionId);
  return answer(await deliverNow(ctx, session, await textDelivery(ctx, sessionId, to, message, extras)));
};

export const sendText = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SendAnswer> => {
  const { to, message, ...extras } = parseInput(sendSchema, input);
  await admit(ctx);
  return deliverText(ctx, sessionId, to, message, extras);
};

/** POST /whatsapp/send and /sessions/api/send: `sessionId`, `to` and `message` in the body. */
export const sendTextShortcut = async (ctx: RequestContext, input: unknown): Promise<SendAnswer> => {
  const { sessionId, to, message, ...extras } = parseInput(shortcutSendSchema, input);
  await admit(ctx);
  return deliverText(ctx, sessionId, to, message, extras);
};

/** Media bytes come from the caller's URL, fetched only after the request passed every other check. */
export const mediaDelivery = async (
  ctx: RequestContext,
  to: string,
  media: { mediaType: MediaType; url: string; mimetype?: string; caption?: string; filename?: string; ptt?: boolean },
  field = 'url',
  reply: ReplyContext = {},
): Promise<Delivery> => {
  const fetched = await ctx.fetchMedia(media.url, field);
  return {
    to,
    content: {
      ...reply,
      kind: 'media',
      mediaType: media.mediaType,
      data: fetched.data,
      mimetype: media.mimetype ?? fetched.mimetype,
      caption: media.caption,
      fileName: media.filename ?? fetched.fileName,
      ptt: media.ptt,
    },
    summary: media.caption || `[${media.mediaType}] ${media.filename ?? fetched.fileName ?? ''}`.trim(),
    kind: media.mediaType,
    mediaUrl: media.url,
  };
};

export const sendMedia = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SendAnswer> => {
  const { quotedMessageId, mentions, ...body } = parseInput(mediaSchema(ctx.settings.MEDIA_ALLOW_PRIVATE), input);
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  const reply = await replyContext(ctx, sessionId, { quotedMessageId, mentions });
  requireLink(ctx, session);
  return answer(await deliverNow(ctx, session, await mediaDelivery(ctx, body.to, body, 'url', reply)));
};

type InteractiveInput = z.output<typeof groupInteractiveSchema>;

/** Buttons when they are allowed; otherwise, or when a button send fails, the same text without them. */
export const sendInteractiveTo = async (
  ctx: RequestContext,
  sessionId: string,
  to: string,
  { quotedMessageId, mentions, ...body }: InteractiveInput,
): Promise<SendAnswer> => {
  const session = await ownSessionId(ctx, sessionId);
  const reply = await replyContext(ctx, sessionId, { quotedMessageId, mentions });
  requireLink(ctx, session);
  const plainText = body.header ? `${body.header}\n\n${body.body}` : body.body;
  const plain: Delivery = { to, content: { kind: 'text', text: plainText, ...reply }, summary: body.body, kind: 'text' };
  const buttons: ButtonSpec[] | undefined = body.buttons?.map((b, i) => ({
    ...b,
    type: b.type as ButtonSpec['type'],
    id: b.type === 'reply' ? (b.id ?? `btn-${i + 1}-${crypto.randomUUID().slice(0, 8)}`) : b.id,
  }));
  if (body.sections || !buttons || !ctx.buttons.allows(sessionId)) return answer(await deliverNow(ctx, session, plain));
  try {
    const row = await deliverNow(ctx, session, {
      to,
      content: { kind: 'buttons', body: body.body, header: body.header, footer: body.footer, buttons, ...reply },
      summary: body.body,
      kind: 'interactive',
    });
    return answer(row);
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'NETWORK_ERROR') throw err;
    ctx.buttons.failed(sessionId);
    ctx.logger.warn({ sessionId }, 'button message refused; sending it as plain text');
    return answer(await deliverNow(ctx, session, plain));
  }
};

export const sendInteractive = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SendAnswer> => {
  const { chatId, ...body } = parseInput(interactiveSchema, input);
  await admit(ctx);
  return sendInteractiveTo(ctx, sessionId, chatId, body);
};

export const sendRich = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SendAnswer> => {
  const body = parseInput(richSchema(ctx.settings.MEDIA_ALLOW_PRIVATE), input);
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  const reply = await replyContext(ctx, sessionId, { quotedMessageId: body.quotedMessageId });
  requireLink(ctx, session);
  let delivery: Delivery;
  if (body.documentUrl) {
    delivery = await mediaDelivery(
      ctx,
      body.jid,
      { mediaType: 'document', url: body.documentUrl, filename: body.fileName, mimetype: body.mimetype },
      'documentUrl',
      reply,
    );
  } else if (body.contactName && body.contactPhone) {
    delivery = {
      to: body.jid,
      content: { kind: 'contact', displayName: body.contactName, phone: body.contactPhone, ...reply },
      summary: `${body.contactName} (${body.contactPhone})`,
      kind: 'contact',
    };
  } else {
    const { latitude = 0, longitude = 0, locationName, locationAddress } = body;
    delivery = {
      to: body.jid,
      content: { kind: 'location', latitude, longitude, name: locationName, address: locationAddress, ...reply },
      summary: [`${latitude},${longitude}`, locationName, locationAddress].filter(Boolean).join(' '),
      kind: 'location',
    };
  }
  return answer(await deliverNow(ctx, session, delivery));
};

export const sendTyping = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<{ ok: true }> => {
  const { quotedMessageId, mentions, ...body } = parseInput(typingSchema, input);
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  // The quote is found before "typing…" shows: an unknown one is a 404 with nothing shown or sent.
  const delivery = await textDelivery(ctx, sessionId, body.jid, body.text, { quotedMessageId, mentions });
  const delayMs = Math.min(body.delayMs, ctx.settings.TYPING_MAX_MS);
  const typing = (link: NetworkLink) => showTyping(ctx, link, body.jid, delayMs);
  await deliverAfter(ctx, session, typing, delivery);
  return { ok: true };
};

const ownMessage = async (ctx: RequestContext, sessionId: string, messageId: string): Promise<OutgoingMessage> => {
  await ctx.outgoing.settled();
  const row = await ctx.db.outgoingMessage.findFirst({
    where: { id: messageId, sessionId, accountId: ctx.caller.accountId },
  });
  if (!row) throw notFound('Message');
  return row;
};

/** One message record for GraphQL, with plugin-prisma's `query`. */
export const getMessageRow = async (
  ctx: RequestContext,
  sessionId: string,
  messageId: string,
  query: Pick<Prisma.OutgoingMessageFindFirstArgs, 'include' | 'select'> = {},
): Promise<OutgoingMessage> => {
  await ownSessionId(ctx, sessionId);
  await ctx.outgoing.settled();
  const row = await ctx.db.outgoingMessage.findFirst({ ...query, where: { id: messageId, sessionId, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Message');
  return row;
};

export const getMessage = async (ctx: RequestContext, sessionId: string, messageId: string): Promise<MessageRecordView> => {
  await ownSessionId(ctx, sessionId);
  return messageView(await ownMessage(ctx, sessionId, messageId));
};

export const editMessage = async (ctx: RequestContext, sessionId: string, messageId: string, input: unknown): Promise<SendAnswer> => {
  const { text: newText } = parseInput(editSchema, input);
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  const row = await ownMessage(ctx, sessionId, messageId);
  if (!row.waMessageId || !row.remoteJid || row.status !== 'SENT') {
    throw new DomainError('MESSAGE_NOT_EDITABLE', 'This message has no network id or recipient on record, so it cannot be edited');
  }
  const link = requireLink(ctx, session);
  try {
    await link.edit(row.remoteJid, row.waMessageId, newText);
  } catch (err) {
    throw new DomainError('NETWORK_ERROR', `The network refused the edit: ${err instanceof Error ? err.message : String(err)}`);
  }
  // The record shows the text as it reads now; the store keeps the first text and the latest edit.
  await ctx.db.$transaction([
    ctx.db.outgoingMessage.update({ where: { id: row.id }, data: { content: newText } }),
    ctx.db.message.updateMany({ where: { outgoingId: row.id }, data: { editedText: newText, editedAt: ctx.now() } }),
  ]);
  return { ok: true, id: row.id };
};

export const listMessages = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ count: number; items: MessageRecordView[] }> => {
  const { limit, status, to } = parseInput(historySchema, input);
  await ownSessionId(ctx, sessionId);
  const where: Prisma.OutgoingMessageWhereInput = { sessionId, ...(status ? { status } : {}), ...recipientFilter(to) };
  await ctx.outgoing.settled();
  const rows = await ctx.db.outgoingMessage.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
  return { count: rows.length, items: rows.map(messageView) };
};

/** Long-poll: answers at once when items wait, else as soon as one arrives or waitMs pass. */
export const readIncoming = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
  signal?: AbortSignal,
): Promise<{ count: number; consumed: boolean; items: IncomingItem[] }> => {
  const { limit, waitMs, consume } = parseInput(incomingSchema, input);
  await ownSessionId(ctx, sessionId);
  await ctx.incoming.waitForItem(sessionId, waitMs, signal);
  // A caller that went away must not consume items it will never see.
  if (signal?.aborted) return { count: 0, consumed: consume, items: [] };
  const items = ctx.incoming.read(sessionId, limit, consume);
  return { count: items.length, consumed: consume, items };
};
