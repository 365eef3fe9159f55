import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { NetworkLink } from '../runtime/ports/network.ts';
import type { SessionHealthEvent } from '../runtime/ports/events.ts';
import type { PaceHealth, PaceRules, Slot } from '../runtime/ports/pacer.ts';
import type { Deps, RequestContext } from './context.ts';
import type { PacingDefaults } from './session-settings.ts';
import { cachedSettings, forgetSettings, PACING_FIELDS } from './session-settings.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';
import { messageEvent, writeWithEvents } from './webhooks.ts';

/** The lastError and the reason of queued messages when the network restricts the number (ack 463). */
export const RESTRICTED_REASON =
  'The network restricted this number: it refuses messages to new chats (error 463); chats with earlier messages go on';
/** What a cancelled queued message's record says. */
export const CANCELLED_REASON = 'cancelled by the client before it was sent';

const capsOf = (setting: string): number[] => (setting ? setting.split(',').map(Number) : []);

/** A session's pacing: its settings over its account's defaults over the process defaults. */
export const paceRules = async (deps: Pick<Deps, 'db' | 'settings'>, sessionId: string): Promise<PaceRules> => {
  const own = await cachedSettings(deps, sessionId);
  const account = own?.account;
  const d = deps.settings;
  return {
    intervalMs: own?.sendIntervalMs ?? account?.sendIntervalMs ?? d.PACING_INTERVAL_MS,
    jitterMs: own?.sendJitterMs ?? account?.sendJitterMs ?? d.PACING_JITTER_MS,
    perChatMs: own?.perChatIntervalMs ?? account?.perChatIntervalMs ?? d.PACING_PER_CHAT_MS,
    typingMsPerChar: own?.typingMsPerChar ?? account?.typingMsPerChar ?? d.PACING_TYPING_MS_PER_CHAR,
    typingMaxMs: d.TYPING_MAX_MS,
    warmupCaps: (own?.warmup ?? account?.warmup ?? true) ? capsOf(d.PACING_WARMUP_CAPS) : [],
    linkedAt: own?.linkedAt ?? null,
  };
};

const paceMs = (max: number) => z.number().int().min(0).max(max).nullable().optional();

/** The pacing fields as a session's or an account's settings take them: null puts one back to the level below. */
export const pacingSettingsShape = {
  sendIntervalMs: paceMs(3_600_000),
  sendJitterMs: paceMs(3_600_000),
  perChatIntervalMs: paceMs(3_600_000),
  typingMsPerChar: paceMs(1_000),
  warmup: z.boolean().nullable().optional(),
};

export const accountPacingSchema = z.strictObject(pacingSettingsShape);

const pacingOf = (row: PacingDefaults): PacingDefaults => ({
  sendIntervalMs: row.sendIntervalMs,
  sendJitterMs: row.sendJitterMs,
  perChatIntervalMs: row.perChatIntervalMs,
  typingMsPerChar: row.typingMsPerChar,
  warmup: row.warmup,
});

/** The account's pacing defaults for its sessions (extension: GET /v1/accounts/me/settings). */
export const getAccountPacing = async (ctx: RequestContext): Promise<{ ok: true; settings: PacingDefaults }> => {
  const row = await ctx.db.account.findUniqueOrThrow({ where: { id: ctx.caller.accountId }, select: PACING_FIELDS });
  return { ok: true, settings: pacingOf(row) };
};

export const updateAccountPacing = async (ctx: RequestContext, input: unknown): Promise<{ ok: true; settings: PacingDefaults }> => {
  const changes = parseInput(accountPacingSchema, input);
  const row = await ctx.db.account.update({ where: { id: ctx.caller.accountId }, data: changes, select: PACING_FIELDS });
  // Any session of the account may take these: all are read again.
  forgetSettings(ctx);
  ctx.logger.info({ changes }, 'account pacing defaults changed');
  return { ok: true, settings: pacingOf(row) };
};

const DAY_MS = 24 * 3600 * 1000;

/**
 * The first slot asked for a session in this process (after a start, a take-over, or a new number)
 * counts what the number sent on the warm-up's day so far, from its SENT records: the day's cap holds
 * across restarts and nodes. Records still PENDING are not counted here: they take a fresh slot, which
 * counts them, when they fall due. One query per session and linked number.
 */
const countWarmupSent = async (deps: Pick<Deps, 'db' | 'pacer' | 'now'>, sessionId: string, rules: PaceRules): Promise<void> => {
  const { linkedAt, warmupCaps } = rules;
  if (!linkedAt || warmupCaps.length === 0 || deps.pacer.warmupCounted(sessionId, linkedAt)) return;
  const linked = linkedAt.getTime();
  const day = Math.floor((deps.now().getTime() - linked) / DAY_MS);
  // Past the warm-up (or before it, a clock set back) no cap applies, so there is nothing to count.
  const capped = day >= 0 && day < warmupCaps.length;
  const sent = capped
    ? await deps.db.outgoingMessage.count({
        where: { sessionId, status: 'SENT', sentAt: { gte: new Date(linked + day * DAY_MS), lt: new Date(linked + (day + 1) * DAY_MS) } },
      })
    : 0;
  deps.pacer.countWarmup(sessionId, linkedAt, day, sent);
};

/**
 * The order a session's queue goes in: by due time, then in the order the API accepted the messages
 * (record ids are time-ordered within a process).
 */
export const QUEUE_ORDER = [{ sendAt: 'asc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }];
/** at most this many due records of one chat are given their slots ahead of a message asking for its own */
const DUE_AHEAD_MAX = 500;

/**
 * The slot of a message about to leave (`recordId`, to `chatId`, `chars` long): null when pacing is off
 * for the process. A slot in the future, or one with typing first, means the message waits. `refused`:
 * the network refused it for the rate after it was taken, so it goes behind the pause and ahead of the
 * later messages of its chat (its warm-up count was taken with its first slot).
 */
export const slotFor = async (
  deps: Pick<Deps, 'db' | 'settings' | 'pacer' | 'now'>,
  sessionId: string,
  chatId: string,
  chars: number,
  recordId: string,
  { refused = false }: { refused?: boolean } = {},
): Promise<Slot | null> => {
  if (!deps.pacer.enabled) return null;
  const rules = await paceRules(deps, sessionId);
  if (refused) return deps.pacer.refused(sessionId, chatId, rules, chars, recordId, deps.now().getTime());
  await countWarmupSent(deps, sessionId, rules);
  if (!deps.pacer.holds(sessionId, recordId)) {
    // The chat's records already due whose jobs have not asked yet (late, or firing together) go first,
    // in queue order: a message never overtakes an earlier one to its chat, whichever asks first. (A
    // record whose slot was taken is skipped by the pacer until its outcome is written: runDueMessage's
    // finish releases it after that write.)
    const now = deps.now();
    const due = await deps.db.outgoingMessage.findMany({
      where: { sessionId, toNumber: chatId, status: 'PENDING', sendAt: { lte: now } },
      orderBy: QUEUE_ORDER,
      select: { id: true, kind: true, content: true },
      take: DUE_AHEAD_MAX,
    });
    deps.pacer.ahead(
      sessionId,
      chatId,
      rules,
      due.map((row) => ({ id: row.id, chars: row.kind === 'status' ? 0 : row.content.length })),
      now.getTime(),
    );
  }
  return deps.pacer.slot(sessionId, chatId, rules, chars, recordId, deps.now().getTime());
};

/**
 * Waits inside a request for a record's slot (bulk sends and statuses, whose answer reports the
 * outcome). On waking it asks the pacer again (`again`: the record's slotFor), because a pause or an
 * earlier message of its chat may have moved it meanwhile; returns the slot it goes in, now due.
 */
export const waitForSlot = async (deps: Pick<Deps, 'now'>, first: Slot, again: () => Promise<Slot | null>): Promise<Slot> => {
  let slot = first;
  for (;;) {
    const wait = slot.at - deps.now().getTime();
    if (wait <= 0) return slot;
    await sleep(wait);
    slot = (await again()) ?? { ...slot, at: deps.now().getTime() };
  }
};

/**
 * Hands a message to the network after the messages of its chat handed over before it have left (their
 * send settled): a slot orders the starts of sends, and a send that takes longer (the first to a chat
 * fetches the recipient's devices and keys) would otherwise be overtaken by the next one of its chat.
 * Called right after the pacer's `take`, so the turns are the slots' order. Pacing off: at once.
 */
export const inChatOrder = <T>(deps: Pick<Deps, 'pacer'>, sessionId: string, chatId: string, send: () => Promise<T>): Promise<T> =>
  deps.pacer.enabled ? oneAtATime(`send:${sessionId}:${chatId}`, send) : send();

/** "typing…" in the chat for `ms`, then paused; a presence the network refuses does not stop the send. */
export const showTyping = async (deps: Pick<Deps, 'logger'>, link: NetworkLink, chatId: string, ms: number): Promise<void> => {
  const presence = (state: 'composing' | 'paused') =>
    link.setPresence(chatId, state).catch((err: unknown) => deps.logger.debug({ err }, 'presence update failed'));
  await presence('composing');
  await sleep(ms);
  await presence('paused');
};

/** Whether a send failed because the network answered rate-overlimit (a usync query past the rate). */
export const isRateAnswer = (err: unknown): boolean => err instanceof Error && /rate-overlimit/.test(err.message);

/* ---------------------------------------------------------------- health */

export type SessionHealth = SessionHealthEvent;

const healthView = (sessionId: string, health: PaceHealth, queueLength: number, at: Date): SessionHealth => ({
  sessionId,
  state: health.state,
  reason: health.reason,
  pausedUntil: health.pausedUntil ? health.pausedUntil.toISOString() : null,
  rateAnswers: health.rateAnswers,
  queueLength,
  at: at.toISOString(),
});

const queueLengthOf = (deps: Pick<Deps, 'db'>, sessionId: string): Promise<number> =>
  deps.db.outgoingMessage.count({ where: { sessionId, status: 'PENDING' } });

/** The session's health changed: a session.health webhook and subscription event. */
export const announceHealth = async (deps: Deps, sessionId: string): Promise<SessionHealth | null> => {
  const settings = await cachedSettings(deps, sessionId);
  if (!settings) return null;
  const health = await healthOf(deps, sessionId);
  deps.events.publish('health', sessionId, health);
  await deps.webhooks.emit({ accountId: settings.accountId, sessionId, type: 'session.health', data: health });
  return health;
};

/** The first message after a pause went: the session.health event says it is back (logged, never thrown). */
export const announceResumed = async (deps: Deps, sessionId: string): Promise<void> => {
  deps.logger.info({ sessionId }, 'sending resumed after the pause');
  await announceHealth(deps, sessionId).catch((err: unknown) =>
    deps.logger.error({ err, sessionId }, 'announcing a resumed session failed'),
  );
};

/** A session's health now (of a session already known to be the caller's). */
export const healthOf = async (deps: Pick<Deps, 'db' | 'pacer' | 'now'>, sessionId: string): Promise<SessionHealth> =>
  healthView(sessionId, deps.pacer.health(sessionId, deps.now().getTime()), await queueLengthOf(deps, sessionId), deps.now());

export const sessionHealth = async (ctx: RequestContext, sessionId: string): Promise<{ ok: true; health: SessionHealth }> => {
  await ownSession(ctx, sessionId);
  return { ok: true, health: await healthOf(ctx, sessionId) };
};

/* ---------------------------------------------------------------- push-back */

/**
 * Ends a session's queue: every PENDING record not being sent becomes FAILED with `reason`, so a
 * restricted or banned number does not retry into the network's refusals.
 */
export const endQueue = async (deps: Deps, sessionId: string, reason: string): Promise<number> => {
  const queued = await deps.db.outgoingMessage.findMany({ where: { sessionId, status: 'PENDING', claimedAt: null } });
  let ended = 0;
  for (const row of queued) {
    const change = deps.db.outgoingMessage.updateMany({
      where: { id: row.id, status: 'PENDING', claimedAt: null },
      data: { status: 'FAILED', error: reason },
    });
    await writeWithEvents(deps, change, [messageEvent({ ...row, status: 'FAILED', error: reason })]);
    deps.pacer.release(sessionId, row.id);
    ended += 1;
  }
  return ended;
};

/**
 * The network refused a call of a session's link (any: a send, a recipient check, a group change...). A
 * rate answer pauses the session's sending with back-off, whatever asked, so the calls that follow are
 * not another burst into the limit. With pacing off there is no back-off: the refusal is only the caller's.
 */
export const networkRefused = async (deps: Deps, sessionId: string, err: unknown): Promise<void> => {
  if (deps.pacer.enabled && isRateAnswer(err)) await rateAnswered(deps, sessionId);
};

/** The network answered with rate-overlimit: the session pauses; returns when sending resumes. */
export const rateAnswered = async (deps: Deps, sessionId: string): Promise<Date> => {
  const pausedBefore = deps.pacer.health(sessionId, deps.now().getTime()).state === 'paused';
  const until = deps.pacer.rateAnswer(sessionId, deps.now().getTime());
  deps.metrics.rateAnswers.inc();
  if (!pausedBefore) {
    deps.logger.warn({ sessionId, pausedUntil: until }, 'the network answered rate-overlimit; sending paused');
    await announceHealth(deps, sessionId);
  }
  return until;
};

/** The network restricted or banned the number: its status says so, its queue ends. */
export const pushedBack = async (deps: Deps, sessionId: string, state: 'restricted' | 'banned', reason: string): Promise<void> => {
  const before = deps.pacer.health(sessionId, deps.now().getTime()).state;
  deps.pacer.mark(sessionId, state, reason);
  if (before === state) return;
  deps.logger.warn({ sessionId, state }, reason);
  // A ban's status and lastError are the link's own close (DISCONNECTED); a restriction leaves the link up.
  if (state === 'restricted') await deps.sessions.noteProblem(sessionId, reason);
  const ended = await endQueue(deps, sessionId, reason);
  if (ended > 0) deps.logger.info({ sessionId, ended }, 'queued messages ended');
  await announceHealth(deps, sessionId);
};

/** A session's link opened: its pacing is read again (a new number starts its warm-up), and a ban or restriction noted before is over. */
export const linkOpened = async (deps: Deps, sessionId: string): Promise<void> => {
  forgetSettings(deps, sessionId);
  const { state } = deps.pacer.health(sessionId, deps.now().getTime());
  if (state !== 'banned' && state !== 'restricted') return;
  deps.pacer.mark(sessionId, 'ok', null);
  await announceHealth(deps, sessionId);
};
