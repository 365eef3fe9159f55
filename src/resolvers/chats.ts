import { z } from 'zod';
import type { Session } from '../generated/sqlite/client.ts';
import type { CallReceived, PresenceUpdate } from '../runtime/ports/events.ts';
import type { ChatEvent } from '../runtime/ports/network.ts';
import type { Deps, RequestContext } from './context.ts';
import { chatRead } from './conversations.ts';
import { requireLink } from './delivery.ts';
import { DomainError } from './errors.ts';
import { JID_MESSAGE, toJid, USER_DOMAIN } from './jids.ts';
import { pacingSettingsShape } from './pacing.ts';
import { cachedSettings, forgetSettings } from './session-settings.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';

/* ---------------------------------------------------------------- session settings */

/** The per-session settings of the chat extensions, as the settings route shows and takes them. */
export interface SessionSettings {
  sendReadReceipts: boolean;
  ignoreGroups: boolean;
  ignoreStatuses: boolean;
  ignoreBroadcasts: boolean;
  ignoreChannels: boolean;
  rejectCalls: boolean;
  rejectCallsMessage: string | null;
  /** send pacing (docs/ban-safety.md); null = the process default */
  sendIntervalMs: number | null;
  sendJitterMs: number | null;
  perChatIntervalMs: number | null;
  typingMsPerChar: number | null;
  warmup: boolean | null;
}

export const sessionSettingsSchema = z.strictObject({
  sendReadReceipts: z.boolean().optional(),
  ignoreGroups: z.boolean().optional(),
  ignoreStatuses: z.boolean().optional(),
  ignoreBroadcasts: z.boolean().optional(),
  ignoreChannels: z.boolean().optional(),
  rejectCalls: z.boolean().optional(),
  rejectCallsMessage: z.string().trim().min(1, 'must not be empty (null clears it)').max(4096).nullable().optional(),
  ...pacingSettingsShape,
});

export const settingsOf = (row: Session): SessionSettings => ({
  sendReadReceipts: row.sendReadReceipts,
  ignoreGroups: row.ignoreGroups,
  ignoreStatuses: row.ignoreStatuses,
  ignoreBroadcasts: row.ignoreBroadcasts,
  ignoreChannels: row.ignoreChannels,
  rejectCalls: row.rejectCalls,
  rejectCallsMessage: row.rejectCallsMessage,
  sendIntervalMs: row.sendIntervalMs,
  sendJitterMs: row.sendJitterMs,
  perChatIntervalMs: row.perChatIntervalMs,
  typingMsPerChar: row.typingMsPerChar,
  warmup: row.warmup,
});

export interface SettingsAnswer {
  ok: true;
  settings: SessionSettings;
}

export const getSessionSettings = async (ctx: RequestContext, sessionId: string): Promise<SettingsAnswer> => ({
  ok: true,
  settings: settingsOf(await ownSession(ctx, sessionId)),
});

/** Changes the settings given, keeps the others. */
export const updateSessionSettings = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SettingsAnswer> => {
  const changes = parseInput(sessionSettingsSchema, input);
  await ownSession(ctx, sessionId);
  const row = await ctx.db.session.update({ where: { id: sessionId }, data: changes });
  forgetSettings(ctx, sessionId);
  ctx.logger.info({ sessionId, changes }, 'session settings changed');
  return { ok: true, settings: settingsOf(row) };
};

/* ---------------------------------------------------------------- ignore filters */

export type IgnoredKind = 'group' | 'status' | 'broadcast' | 'channel';

/** Which ignore filter a chat falls under, if any. */
export const chatKindOf = (chatId: string): IgnoredKind | null => {
  if (chatId === 'status@broadcast') return 'status';
  if (chatId.endsWith('@broadcast')) return 'broadcast';
  if (chatId.endsWith('@g.us')) return 'group';
  if (chatId.endsWith('@newsletter')) return 'channel';
  return null;
};

/** Whether the session's settings drop a received message of this chat before anything keeps it. */
export const ignoresChat = async (deps: Pick<Deps, 'db'>, sessionId: string, chatId: string): Promise<boolean> => {
  const kind = chatKindOf(chatId);
  if (!kind) return false;
  const settings = await cachedSettings(deps, sessionId);
  if (!settings) return false;
  switch (kind) {
    case 'group':
      return settings.ignoreGroups;
    case 'status':
      return settings.ignoreStatuses;
    case 'broadcast':
      return settings.ignoreBroadcasts;
    case 'channel':
      return settings.ignoreChannels;
  }
};

/* ---------------------------------------------------------------- number check */

export const MAX_NUMBERS = 50;

const numberSchema = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const digits = value.endsWith(`@${USER_DOMAIN}`) ? value.slice(0, -USER_DOMAIN.length - 1) : value;
    if (!/^\d{5,20}$/.test(digits)) {
      ctx.addIssue({ code: 'custom', message: `must be a phone number: 5 to 20 digits without + (or <digits>@${USER_DOMAIN})` });
      return z.NEVER;
    }
    return digits;
  });

export const numbersCheckSchema = z.strictObject({
  numbers: z.array(numberSchema).min(1, 'give at least one number').max(MAX_NUMBERS, `at most ${MAX_NUMBERS} numbers per request`),
});

export interface NumberCheck {
  number: string;
  onWhatsApp: boolean;
  jid: string | null;
  lid: string | null;
}

export interface NumbersAnswer {
  ok: true;
  numbers: NumberCheck[];
}

/** The network refused or failed an immediate operation: 502, with what it said. */
const onNetwork = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (err) {
    throw new DomainError('NETWORK_ERROR', `The network refused to ${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
};

/** Which of these numbers are on WhatsApp, with their JID and LID; answered in the order asked. */
export const checkNumbers = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<NumbersAnswer> => {
  const { numbers } = parseInput(numbersCheckSchema, input);
  const link = requireLink(ctx, await ownSession(ctx, sessionId));
  const found = await onNetwork('check the numbers', () => link.chats.checkNumbers(numbers.map((n) => `${n}@${USER_DOMAIN}`)));
  return {
    ok: true,
    numbers: numbers.map((number, i) => {
      const answer = found[i];
      const on = answer?.onNetwork ?? false;
      return { number, onWhatsApp: on, jid: on ? (answer?.jid ?? null) : null, lid: on ? (answer?.lid ?? null) : null };
    }),
  };
};

/* ---------------------------------------------------------------- read marks */

/** A chat named in a path: digits, a user or LID JID, or a group. */
export const chatJidFrom = (value: string, path = 'chatId'): string => {
  const jid = toJid(value.trim());
  if (!jid || jid.endsWith('@newsletter') || jid.endsWith('@broadcast')) {
    throw new DomainError('VALIDATION_FAILED', 'Invalid chat id', {
      details: [{ path, message: `must be a person or a group: ${JID_MESSAGE}` }],
    });
  }
  return jid;
};

export const markReadSchema = z.strictObject({
  messageIds: z
    .array(z.string().trim().min(1, 'must not be empty').max(128))
    .min(1, 'give at least one id, or leave messageIds out to mark the whole chat')
    .max(500)
    .optional(),
});

export interface MarkReadAnswer {
  ok: true;
  chatId: string;
  /** network ids of the messages marked read (a read receipt went to their senders) */
  read: string[];
  /** ids given that could not be marked: group messages this link did not receive since it started */
  unknown: string[];
}

export const READ_RECEIPTS_OFF =
  'Read receipts are off for this session: read marks tell the sender you looked. Turn them on with PATCH /v1/sessions/{id}/settings {"sendReadReceipts": true}';

/** Sends read receipts for received messages of a chat: those given, or all this link received unread. */
export const markChatRead = async (
  ctx: RequestContext,
  sessionId: string,
  chatIdParam: string,
  input: unknown,
): Promise<MarkReadAnswer> => {
  const chatId = chatJidFrom(chatIdParam);
  const body = parseInput(markReadSchema, input ?? {});
  const session = await ownSession(ctx, sessionId);
  if (!session.sendReadReceipts) throw new DomainError('CONFLICT', READ_RECEIPTS_OFF);
  const link = requireLink(ctx, session);
  const marked = await onNetwork('mark the chat read', () => link.chats.markRead(chatId, body.messageIds));
  // the stored chat (docs/conversations.md): nothing unread since this mark
  await chatRead(ctx, sessionId, chatId);
  ctx.logger.info({ sessionId, chatId, read: marked.read.length, unknown: marked.unknown.length }, 'chat marked read');
  return { ok: true, chatId, ...marked };
};

/* ---------------------------------------------------------------- presence */

export const ownPresenceSchema = z.strictObject({
  presence: z.enum(['available', 'unavailable'], { message: 'must be "available" or "unavailable"' }),
});

export const subscribePresence = async (
  ctx: RequestContext,
  sessionId: string,
  chatIdParam: string,
): Promise<{ ok: true; chatId: string }> => {
  const chatId = chatJidFrom(chatIdParam);
  const link = requireLink(ctx, await ownSession(ctx, sessionId));
  await onNetwork("subscribe to the chat's presence", () => link.chats.subscribePresence(chatId));
  return { ok: true, chatId };
};

export const setOwnPresence = async (
  ctx: RequestContext,
  sessionId: string,
  input: unknown,
): Promise<{ ok: true; presence: 'available' | 'unavailable' }> => {
  const { presence } = parseInput(ownPresenceSchema, input);
  const link = requireLink(ctx, await ownSession(ctx, sessionId));
  await onNetwork('set the presence', () => link.chats.setOwnPresence(presence));
  return { ok: true, presence };
};

/* ---------------------------------------------------------------- profile pictures */

export const pictureQuerySchema = z.object({
  size: z.enum(['image', 'preview'], { message: 'must be "image" (full size) or "preview" (thumbnail)' }).default('image'),
});

export interface PictureAnswer {
  ok: true;
  chatId: string;
  /** null when the person or group has no picture, or hides it from this account (the network does not say which) */
  url: string | null;
}

/** The URL of a person's or group's profile picture, as the network gives it (its links expire). */
export const profilePicture = async (
  ctx: RequestContext,
  sessionId: string,
  chatIdParam: string,
  input: unknown,
): Promise<PictureAnswer> => {
  const chatId = chatJidFrom(chatIdParam);
  const { size } = parseInput(pictureQuerySchema, input ?? {});
  const link = requireLink(ctx, await ownSession(ctx, sessionId));
  const url = await onNetwork('give the profile picture', () => link.chats.profilePicture(chatId, size));
  return { ok: true, chatId, url };
};

/* ---------------------------------------------------------------- events */

type EventDeps = Pick<Deps, 'db' | 'webhooks' | 'events' | 'sessions' | 'logger'>;

const rejectCall = async (deps: EventDeps, sessionId: string, callerJid: string, callId: string, to: string, text: string | null) => {
  const link = deps.sessions.link(sessionId);
  if (!link) return false;
  await link.chats.rejectCall(callId, callerJid);
  // The answer is a courtesy to the caller, sent outside the history and the quota (as a receipt is).
  if (text) await link.send(to, { kind: 'text', text });
  return true;
};

/**
 * Presence updates and calls a link heard: each becomes its webhook event and is pushed to
 * subscriptions; a call that rings a session with rejectCalls on is rejected first.
 */
export const announceChatEvent = async (deps: EventDeps, sessionId: string, event: ChatEvent): Promise<void> => {
  const settings = await cachedSettings(deps, sessionId);
  if (!settings) return;
  const { accountId } = settings;
  if (event.kind === 'presence') {
    if (await ignoresChat(deps, sessionId, event.chatJid)) return;
    const update: PresenceUpdate = {
      sessionId,
      chatId: event.chatJid,
      from: event.from,
      fromLid: event.fromLid,
      presence: event.presence,
      lastSeen: event.lastSeen === null ? null : new Date(event.lastSeen).toISOString(),
      at: new Date().toISOString(),
    };
    deps.events.publish('presence', sessionId, update);
    await deps.webhooks.emit({ accountId, sessionId, type: 'presence.update', data: update });
    return;
  }
  // A call raises one event, when it rings; its later states (accepted elsewhere, ended) do not.
  if (event.kind !== 'call' || event.status !== 'offer') return;
  let rejected = false;
  if (settings.rejectCalls && !event.offline) {
    rejected = await rejectCall(deps, sessionId, event.callerJid, event.callId, event.from, settings.rejectCallsMessage).catch(
      (err: unknown) => {
        deps.logger.warn({ err, sessionId, callId: event.callId }, 'rejecting a call failed');
        return false;
      },
    );
  }
  const call: CallReceived = {
    sessionId,
    callId: event.callId,
    from: event.from,
    fromLid: event.fromLid,
    groupId: event.groupJid,
    isVideo: event.isVideo,
    offline: event.offline,
    rejected,
    at: new Date(event.at).toISOString(),
  };
  deps.logger.info({ sessionId, callId: call.callId, rejected }, 'call received');
  deps.events.publish('calls', sessionId, call);
  await deps.webhooks.emit({ accountId, sessionId, type: 'call.received', data: call });
};
