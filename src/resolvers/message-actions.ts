import { z } from 'zod';
import type { OutgoingMessage } from '../generated/sqlite/client.ts';
import type { MessageUpdate, MessageWaiting } from '../runtime/ports/events.ts';
import type { IncomingItem, MessageKeyRef, ReceivedMessage } from '../runtime/ports/incoming.ts';
import type { ChatEvent, QuotedMessage, ReplyContext } from '../runtime/ports/network.ts';
import { ignoresChat } from './chats.ts';
import { announceStored } from './conversations.ts';
import type { Deps, RequestContext } from './context.ts';
import { requireLink } from './delivery.ts';
import { DomainError, notFound } from './errors.ts';
import { admit } from './idempotency.ts';
import { isJid, USER_DOMAIN } from './jids.ts';
import { ownSessionId } from './sessions.ts';
import { parseInput } from './validate.ts';

const RECORD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A message named by our record id or by its network id (a received message's `waMessageId`). */
export const messageRefSchema = z
  .string()
  .trim()
  .min(1, 'is required')
  .max(128, 'must be at most 128 characters')
  .regex(/^[A-Za-z0-9-]+$/, "must be a message record id or a received message's waMessageId");

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

/** One emoji, or '' to remove the reaction. */
export const emojiSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required (one emoji, or "" to remove the reaction)' : 'must be a string') })
  .refine((v) => v === '' || ([...graphemes.segment(v)].length === 1 && EMOJI.test(v)), {
    message: 'must be a single emoji, or "" to remove the reaction',
  });

export const reactSchema = z.object({ emoji: emojiSchema });

const MENTION = /^\d{5,20}$/;
/** People a message mentions: numbers (digits) or user JIDs (phone-number or LID). */
export const mentionsSchema = z
  .array(
    z
      .string()
      .trim()
      .refine((v) => MENTION.test(v) || (isJid(v) && (v.endsWith(`@${USER_DOMAIN}`) || v.endsWith('@lid'))), {
        message: 'must be a number (digits only, no +), a phone-number JID or a LID JID',
      })
      .transform((v) => (MENTION.test(v) ? `${v}@${USER_DOMAIN}` : v)),
  )
  .min(1, 'must name at least one person')
  .max(256, 'must name at most 256 people')
  .transform((jids) => [...new Set(jids)]);

/** A message this session can point at: one it sent (our record), or any other the store holds. */
type Found =
  | { kind: 'sent'; row: OutgoingMessage; key: MessageKeyRef; chatJid: string }
  | { kind: 'received'; key: MessageKeyRef; chatJid: string; quotable?: string; content: string };

const sentKey = (row: OutgoingMessage): MessageKeyRef | null =>
  row.waMessageId && row.remoteJid && row.status === 'SENT' ? { remoteJid: row.remoteJid, id: row.waMessageId, fromMe: true } : null;

/**
 * Our record by its id (or its network id), else a message of the store by its network id (received, or
 * sent from the phone): found after a restart and from any node. 404 otherwise; a record that never
 * reached the network, or a message deleted for everyone, is a 409.
 */
const findMessage = async (ctx: RequestContext, sessionId: string, ref: string, what: string): Promise<Found> => {
  await ctx.outgoing.settled();
  const where = RECORD_ID.test(ref) ? { OR: [{ id: ref }, { waMessageId: ref }] } : { waMessageId: ref };
  const row = await ctx.db.outgoingMessage.findFirst({ where: { ...where, sessionId, accountId: ctx.caller.accountId } });
  if (row) {
    const key = sentKey(row);
    if (!key) throw new DomainError('CONFLICT', `This message was not sent (it has no network id on record), so it cannot be ${what}`);
    return { kind: 'sent', row, key, chatJid: key.remoteJid };
  }
  const received = await ctx.received.find(sessionId, ref);
  if (!received) {
    throw new DomainError(
      'NOT_FOUND',
      'Message not found: give a message record id, or the waMessageId of a message this session received',
    );
  }
  if (received.deletedAt) throw new DomainError('CONFLICT', `This message was deleted for everyone, so it cannot be ${what}`);
  return {
    kind: 'received',
    key: received.key,
    chatJid: received.key.remoteJid,
    content: received.content,
    ...(received.quotable ? { quotable: received.quotable } : {}),
  };
};

/** The message a reply quotes, found before anything is sent (404 for an unknown one). */
export const quotedMessage = async (ctx: RequestContext, sessionId: string, ref: string): Promise<QuotedMessage> => {
  const found = await findMessage(ctx, sessionId, ref, 'quoted');
  if (found.kind === 'sent') {
    return { key: found.key, text: found.row.content, ...(found.row.sentMessage ? { message: found.row.sentMessage } : {}) };
  }
  return { key: found.key, text: found.content, ...(found.quotable ? { message: found.quotable } : {}) };
};

/** A send's reply fields (extensions): the message it quotes, and the people it mentions. */
export const replyFields = {
  quotedMessageId: messageRefSchema
    .optional()
    .describe('extension: a reply quoting a message this session sent (its record id) or received (its waMessageId)'),
  mentions: mentionsSchema
    .optional()
    .describe('extension: people mentioned, by number (digits) or JID (phone-number or LID); write @<number> in the text to show where'),
};

/** The quote and mentions a send carries; the quoted message is found first (an unknown one is a 404). */
export const replyContext = async (
  ctx: RequestContext,
  sessionId: string,
  extras: { quotedMessageId?: string; mentions?: string[] },
): Promise<ReplyContext> => {
  const quoted = extras.quotedMessageId ? await quotedMessage(ctx, sessionId, extras.quotedMessageId) : undefined;
  return { ...(quoted ? { quoted } : {}), ...(extras.mentions ? { mentions: extras.mentions } : {}) };
};

export interface ReactAnswer {
  ok: true;
  /** the network id of the reaction itself */
  waMessageId: string;
  emoji: string;
  /** the message reacted to: our record's id when it is one we sent, else null */
  messageId: string | null;
  /** the network id of the message reacted to */
  targetWaMessageId: string;
}

/** Reacts to a message we sent or received; '' removes our reaction. */
export const reactToMessage = async (ctx: RequestContext, sessionId: string, messageRef: string, input: unknown): Promise<ReactAnswer> => {
  // The path's id is checked with the body, so every fault is listed at once.
  const withRef = typeof input === 'object' && input !== null && !Array.isArray(input) ? { ...input, messageId: messageRef } : input;
  const { emoji, messageId: ref } = parseInput(reactSchema.extend({ messageId: messageRefSchema }), withRef);
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  const found = await findMessage(ctx, sessionId, ref, 'reacted to');
  const link = requireLink(ctx, session);
  let waMessageId: string;
  try {
    waMessageId = await link.react(found.chatJid, found.key, emoji);
  } catch (err) {
    throw new DomainError('NETWORK_ERROR', `The network refused the reaction: ${err instanceof Error ? err.message : String(err)}`);
  }
  ctx.logger.info({ sessionId, target: found.key.id, removed: emoji === '' }, 'reaction sent');
  return { ok: true, waMessageId, emoji, messageId: found.kind === 'sent' ? found.row.id : null, targetWaMessageId: found.key.id };
};

export interface DeleteAnswer {
  ok: true;
  id: string;
  deletedAt: string;
}

/** Deletes a message we sent for everyone; the record keeps it, with deletedAt. Deleting it again changes nothing. */
export const deleteMessage = async (ctx: RequestContext, sessionId: string, messageId: string): Promise<DeleteAnswer> => {
  await admit(ctx);
  const session = await ownSessionId(ctx, sessionId);
  await ctx.outgoing.settled();
  const row = await ctx.db.outgoingMessage.findFirst({ where: { id: messageId, sessionId, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Message');
  if (row.deletedAt) return { ok: true, id: row.id, deletedAt: row.deletedAt.toISOString() };
  const key = sentKey(row);
  if (!key) throw new DomainError('CONFLICT', 'This message was not sent (it has no network id on record), so it cannot be deleted');
  const link = requireLink(ctx, session);
  try {
    await link.revoke(key.remoteJid, key.id);
  } catch (err) {
    throw new DomainError('NETWORK_ERROR', `The network refused the delete: ${err instanceof Error ? err.message : String(err)}`);
  }
  const deletedAt = ctx.now();
  await ctx.db.$transaction([
    ctx.db.outgoingMessage.update({ where: { id: row.id }, data: { deletedAt } }),
    ctx.db.message.updateMany({ where: { outgoingId: row.id }, data: { text: null, quotable: null, editedText: null, deletedAt } }),
  ]);
  ctx.logger.info({ sessionId, messageId: row.id }, 'message deleted for everyone');
  return { ok: true, id: row.id, deletedAt: deletedAt.toISOString() };
};

const UPDATE_TYPES = { reaction: 'message.reaction', edit: 'message.edited', revoke: 'message.deleted' } as const;

/**
 * A received reaction, edit or delete as its event: it points at the message it is about, by network id
 * and, when that is one of our sent messages, by our record's id.
 */
export const messageUpdateOf = async (
  deps: Pick<Deps, 'db'>,
  item: IncomingItem,
  message: Pick<ReceivedMessage, 'refersTo'>,
): Promise<MessageUpdate | null> => {
  const type = UPDATE_TYPES[item.type as keyof typeof UPDATE_TYPES];
  if (!type || !message.refersTo) return null;
  const ours = await deps.db.outgoingMessage.findFirst({
    where: { sessionId: item.sessionId, waMessageId: message.refersTo },
    select: { id: true },
  });
  return {
    type,
    sessionId: item.sessionId,
    chatId: item.chatId,
    chatLid: item.chatLid,
    from: item.from,
    fromLid: item.fromLid,
    fromMe: item.fromMe,
    waMessageId: item.waMessageId,
    emoji: type === 'message.reaction' ? item.content : null,
    text: type === 'message.edited' ? item.content : null,
    target: { waMessageId: message.refersTo, messageId: ours?.id ?? null, chatId: item.chatId },
    messageTimestamp: item.messageTimestamp,
    receivedAt: item.receivedAt,
  };
};

/**
 * A message the link could not decrypt yet: message.waiting (webhook and subscription), once per message,
 * unless an ignore filter drops its chat. It is noted before anything is awaited, so the resend, which
 * comes after, finds it and its message.received carries waitingSince.
 */
export const announceWaiting = async (
  deps: Pick<Deps, 'db' | 'webhooks' | 'events' | 'waiting' | 'logger' | 'now'>,
  accountOf: (sessionId: string) => Promise<string | null>,
  sessionId: string,
  event: Extract<ChatEvent, { kind: 'waiting' }>,
): Promise<void> => {
  const at = deps.now().toISOString();
  if (!deps.waiting.note(sessionId, event.waMessageId, at)) return;
  if (await ignoresChat(deps, sessionId, event.chatJid)) return;
  const waiting: MessageWaiting = {
    sessionId,
    waMessageId: event.waMessageId,
    chatId: event.chatJid,
    chatLid: event.chatLid,
    from: event.from,
    fromLid: event.fromLid,
    fromMe: event.fromMe,
    messageTimestamp: event.messageTimestamp,
    at,
  };
  deps.logger.info({ sessionId, waMessageId: event.waMessageId }, 'a received message cannot be decrypted yet; waiting for its resend');
  deps.events.publish('messageWaiting', sessionId, waiting);
  const accountId = await accountOf(sessionId);
  if (accountId) await deps.webhooks.emit({ accountId, sessionId, type: 'message.waiting', data: waiting });
};

/**
 * What a received message leaves beside the buffer (and the store, written before), before the network's
 * receipt for it: its message.received event, and for a reaction, an edit or a delete, the event that
 * points at the message it is about (also pushed to subscriptions).
 */
export const announceReceived = async (
  deps: Pick<Deps, 'db' | 'webhooks' | 'events'>,
  accountId: string | null,
  item: IncomingItem,
  message: ReceivedMessage,
): Promise<void> => {
  const { eventId: _eventId, ...data } = item;
  // A message the network delivers again (the next owner's link after a planned move, before the old
  // link's receipt went out) is announced under the same webhook-id, which the outbox writes once.
  const once = (type: string) =>
    item.waMessageId ? { once: { key: `${item.sessionId}\u0000${item.waMessageId}\u0000${type}`, at: item.messageTimestamp } } : {};
  if (accountId)
    await deps.webhooks.emit({ accountId, sessionId: item.sessionId, type: 'message.received', data, ...once('message.received') });
  const update = await messageUpdateOf(deps, item, message);
  announceStored(deps, item, update);
  if (!update) return;
  if (accountId) await deps.webhooks.emit({ accountId, sessionId: item.sessionId, type: update.type, data: update, ...once(update.type) });
  deps.events.publish('messageUpdates', item.sessionId, update);
};
