import { z } from 'zod';
import type { Deps, RequestContext } from './context.ts';
import { notFound } from './errors.ts';
import { accountPacingSchema } from './pacing.ts';
import type { PacingDefaults } from './session-settings.ts';
import { cachedSettings, forgetSettings, PACING_FIELDS } from './session-settings.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';

/** all: every message is stored; specOnly: none beyond what the spec's routes need (docs/conversations.md). */
export const MESSAGE_STORE_MODES = ['all', 'specOnly'] as const;
export type MessageStoreMode = (typeof MESSAGE_STORE_MODES)[number];

/** The account's retention of stored messages (extension: account settings). */
export interface RetentionSettings {
  /** stored messages older than this many days are deleted; null: kept until their session is deleted */
  messageRetentionDays: number | null;
  messageStore: MessageStoreMode;
}

export type AccountSettings = PacingDefaults & RetentionSettings;

const MAX_RETENTION_DAYS = 36_500;

export const retentionSettingsShape = {
  messageRetentionDays: z.number().int().min(1).max(MAX_RETENTION_DAYS).nullable().optional(),
  messageStore: z.enum(MESSAGE_STORE_MODES).nullable().optional(),
};

/** PATCH /v1/accounts/me/settings: the pacing defaults and the retention, each kept when left out. */
export const accountSettingsSchema = accountPacingSchema.extend(retentionSettingsShape);

const SETTINGS_FIELDS = { ...PACING_FIELDS, messageRetentionDays: true, messageStore: true } as const;

const settingsOf = (row: PacingDefaults & { messageRetentionDays: number | null; messageStore: string | null }): AccountSettings => ({
  sendIntervalMs: row.sendIntervalMs,
  sendJitterMs: row.sendJitterMs,
  perChatIntervalMs: row.perChatIntervalMs,
  typingMsPerChar: row.typingMsPerChar,
  warmup: row.warmup,
  messageRetentionDays: row.messageRetentionDays,
  messageStore: row.messageStore === 'specOnly' ? 'specOnly' : 'all',
});

export const getAccountSettings = async (ctx: RequestContext): Promise<{ ok: true; settings: AccountSettings }> => {
  const row = await ctx.db.account.findUniqueOrThrow({ where: { id: ctx.caller.accountId }, select: SETTINGS_FIELDS });
  return { ok: true, settings: settingsOf(row) };
};

/** Changes the account's settings given (null puts one back to its default: the process's, all, kept). */
export const updateAccountSettings = async (ctx: RequestContext, input: unknown): Promise<{ ok: true; settings: AccountSettings }> => {
  const changes = parseInput(accountSettingsSchema, input);
  const row = await ctx.db.account.update({ where: { id: ctx.caller.accountId }, data: changes, select: SETTINGS_FIELDS });
  // Any session of the account may take these: all are read again.
  forgetSettings(ctx);
  ctx.logger.info({ changes }, 'account settings changed');
  return { ok: true, settings: settingsOf(row) };
};

/**
 * Whether a session's account stores messages beyond what the spec's routes need (its messageStore is
 * not specOnly). Read from the session's cached settings: a change applies within SETTINGS_CACHE_MS on
 * other nodes, at once on this one.
 */
export const storesMessages = async (deps: Pick<Deps, 'db'>, sessionId: string): Promise<boolean> =>
  (await cachedSettings(deps, sessionId))?.account.messageStore !== 'specOnly';

/** Rows deleted per statement, so a large backlog never holds a long lock or one huge transaction. */
export const RETENTION_BATCH = 1_000;
const DAY_MS = 24 * 3600 * 1000;

/**
 * Deletes, for each account with a retention, its sessions' stored messages older than it (by the
 * network's time), RETENTION_BATCH rows per statement until none is left, and the chats whose latest
 * message is older too. Outgoing records (the spec's routes read them), received files' records and the
 * webhook outbox have retentions of their own and are not touched. Safe from several nodes at once.
 */
export const purgeExpiredMessages = async (deps: Pick<Deps, 'db' | 'now' | 'logger'>): Promise<number> => {
  const accounts = await deps.db.account.findMany({
    where: { messageRetentionDays: { not: null } },
    select: { id: true, messageRetentionDays: true },
  });
  let deleted = 0;
  for (const account of accounts) {
    const cutoff = new Date(deps.now().getTime() - (account.messageRetentionDays ?? 0) * DAY_MS);
    const sessions = await deps.db.session.findMany({ where: { accountId: account.id }, select: { id: true } });
    for (const { id: sessionId } of sessions) {
      for (;;) {
        const count = await deps.db.$executeRaw`DELETE FROM "Message" WHERE "id" IN (SELECT "id" FROM "Message"
          WHERE "sessionId" = ${sessionId} AND "messageTimestamp" < ${cutoff} LIMIT ${RETENTION_BATCH})`;
        deleted += count;
        if (count < RETENTION_BATCH) break;
      }
      await deps.db.chat.deleteMany({ where: { sessionId, lastMessageAt: { lt: cutoff } } });
    }
  }
  if (deleted > 0) deps.logger.info({ deleted }, 'stored messages past their retention deleted');
  return deleted;
};

const chatIdSchema = z.object({ chatId: z.string().min(1, 'is required').max(200) });

/**
 * Erases one chat of a session: its stored messages (their reactions with them, and their search
 * entries) and its Chat row. Outgoing records stay (the spec's routes serve them). A chat the session
 * has neither messages nor a row of is a 404, like another tenant's.
 */
export const eraseChat = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<{ ok: true; erased: number }> => {
  const { chatId } = parseInput(chatIdSchema, input);
  await ownSession(ctx, sessionId);
  const [messages, chats] = await ctx.db.$transaction([
    ctx.db.message.deleteMany({ where: { sessionId, chatId } }),
    ctx.db.chat.deleteMany({ where: { sessionId, chatId } }),
  ]);
  if (messages.count === 0 && chats.count === 0) throw notFound('Chat');
  ctx.logger.info({ sessionId, chatId, erased: messages.count }, 'chat erased');
  return { ok: true, erased: messages.count };
};
