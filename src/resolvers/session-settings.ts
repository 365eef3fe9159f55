import type { Session } from '../generated/sqlite/client.ts';
import type { Deps } from './context.ts';
import { perDatabase } from './per-database.ts';

/** The pacing fields a session and its account may each set (null: the level below decides). */
export interface PacingDefaults {
  sendIntervalMs: number | null;
  sendJitterMs: number | null;
  perChatIntervalMs: number | null;
  typingMsPerChar: number | null;
  warmup: boolean | null;
}

export const PACING_FIELDS = {
  sendIntervalMs: true,
  sendJitterMs: true,
  perChatIntervalMs: true,
  typingMsPerChar: true,
  warmup: true,
} as const;

/** A session's row with its account's pacing defaults: what received traffic, calls and sends read of it. */
export type SessionWithDefaults = Session & { account: PacingDefaults & { messageStore: string | null } };

/**
 * How long a session's settings are kept per process, so a busy session's messages and sends do not
 * each read its row: a change made here applies at once (forgetSettings), one made by another process
 * within this bound.
 */
export const SETTINGS_CACHE_MS = 5_000;
const cached = perDatabase<{ row: SessionWithDefaults | null; until: number }>();

export const cachedSettings = async (deps: Pick<Deps, 'db'>, sessionId: string): Promise<SessionWithDefaults | null> => {
  const cache = cached(deps.db);
  const hit = cache.get(sessionId);
  if (hit && hit.until > Date.now()) return hit.row;
  const row = await deps.db.session.findUnique({
    where: { id: sessionId },
    include: { account: { select: { ...PACING_FIELDS, messageStore: true } } },
  });
  cache.set(sessionId, { row, until: Date.now() + SETTINGS_CACHE_MS });
  return row;
};

/** A session's settings changed, or its number was linked (all of them: an account's defaults changed). */
export const forgetSettings = (deps: Pick<Deps, 'db'>, sessionId?: string): void => {
  if (sessionId === undefined) cached(deps.db).clear();
  else cached(deps.db).delete(sessionId);
};
