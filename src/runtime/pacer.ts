import type { PaceHealth, PaceRules, PaceState, Pacer, Slot } from './ports/pacer.ts';

const DAY_MS = 24 * 3600 * 1000;
/** past this many chats remembered, those whose spacing has passed are dropped */
const CHATS_KEPT = 1_000;

interface Reserved {
  at: number;
  typingMs: number;
}

interface SessionPace {
  /** the earliest time of the next slot */
  nextAt: number;
  /** each chat's latest slot (the end of its typing) */
  perChat: Map<string, number>;
  /** records waiting for their slot */
  reserved: Map<string, Reserved>;
  /** slots counted per warm-up day (days since linkedAt) */
  days: Map<number, number>;
  pausedUntil: number;
  /** the next pause's length */
  backoffMs: number;
  lastRateAt: number;
  rateAnswers: number;
  state: Exclude<PaceState, 'paused'> | null;
  reason: string | null;
}

export interface PacerOptions {
  enabled: boolean;
  /** the first pause after a rate answer */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** a rate answer this long after the last one starts again from backoffBaseMs */
  backoffResetMs: number;
  random?: () => number;
}

export class SessionPacer implements Pacer {
  readonly enabled: boolean;
  private readonly sessions = new Map<string, SessionPace>();
  private readonly random: () => number;

  constructor(private readonly options: PacerOptions) {
    this.enabled = options.enabled;
    this.random = options.random ?? Math.random;
  }

  private of(sessionId: string): SessionPace {
    let pace = this.sessions.get(sessionId);
    if (!pace) {
      pace = {
        nextAt: 0,
        perChat: new Map(),
        reserved: new Map(),
        days: new Map(),
        pausedUntil: 0,
        backoffMs: this.options.backoffBaseMs,
        lastRateAt: Number.NEGATIVE_INFINITY,
        rateAnswers: 0,
        state: null,
        reason: null,
      };
      this.sessions.set(sessionId, pace);
    }
    return pace;
  }

  slot(sessionId: string, chatId: string, rules: PaceRules, chars: number, recordId?: string, now = Date.now()): Slot {
    const pace = this.of(sessionId);
    const held = recordId === undefined ? undefined : pace.reserved.get(recordId);
    if (held) return { at: held.at, typingMs: held.typingMs };
    const typingMs = rules.typingMsPerChar > 0 ? Math.min(rules.typingMaxMs, chars * rules.typingMsPerChar) : 0;
    const lastOfChat = pace.perChat.get(chatId);
    // A chat's messages keep their order: a new one never shares or precedes a slot of the chat still ahead.
    const chatFree =
      lastOfChat === undefined ? 0 : lastOfChat > now ? lastOfChat + Math.max(1, rules.perChatMs) : lastOfChat + rules.perChatMs;
    let at = Math.max(now, pace.nextAt, pace.pausedUntil, chatFree);
    if (rules.linkedAt && rules.warmupCaps.length > 0) {
      const linked = rules.linkedAt.getTime();
      for (;;) {
        const day = Math.floor((at - linked) / DAY_MS);
        const cap = day >= 0 ? rules.warmupCaps[day] : undefined;
        if (cap === undefined || (pace.days.get(day) ?? 0) < cap) {
          if (cap !== undefined) pace.days.set(day, (pace.days.get(day) ?? 0) + 1);
          break;
        }
        at = linked + (day + 1) * DAY_MS;
      }
    }
    pace.nextAt = at + typingMs + rules.intervalMs + Math.round(this.random() * rules.jitterMs);
    pace.perChat.set(chatId, at + typingMs);
    if (pace.perChat.size > CHATS_KEPT) {
      for (const [chat, last] of pace.perChat) if (last + rules.perChatMs < now) pace.perChat.delete(chat);
    }
    if (recordId !== undefined && (at > now || typingMs > 0)) pace.reserved.set(recordId, { at, typingMs });
    return { at, typingMs };
  }

  release(sessionId: string, recordId: string): void {
    this.sessions.get(sessionId)?.reserved.delete(recordId);
  }

  rateAnswer(sessionId: string, now = Date.now()): Date {
    const pace = this.of(sessionId);
    pace.rateAnswers += 1;
    if (now < pace.pausedUntil) return new Date(pace.pausedUntil);
    if (now - pace.lastRateAt > this.options.backoffResetMs) pace.backoffMs = this.options.backoffBaseMs;
    pace.lastRateAt = now;
    pace.pausedUntil = now + pace.backoffMs;
    pace.backoffMs = Math.min(this.options.backoffMaxMs, pace.backoffMs * 2);
    // The queue moves behind the pause as a whole, so its order and spacing stay.
    let first = Number.POSITIVE_INFINITY;
    for (const reserved of pace.reserved.values()) first = Math.min(first, reserved.at);
    const shift = Number.isFinite(first) ? Math.max(0, pace.pausedUntil - first) : 0;
    if (shift > 0) {
      for (const reserved of pace.reserved.values()) reserved.at += shift;
      for (const [chat, last] of pace.perChat) if (last > now) pace.perChat.set(chat, last + shift);
      pace.nextAt += shift;
    }
    return new Date(pace.pausedUntil);
  }

  mark(sessionId: string, state: PaceState, reason: string | null): void {
    const pace = this.of(sessionId);
    pace.state = state === 'paused' || state === 'ok' ? null : state;
    pace.reason = pace.state ? reason : null;
  }

  health(sessionId: string, now = Date.now()): PaceHealth {
    const pace = this.sessions.get(sessionId);
    if (!pace) return { state: 'ok', reason: null, pausedUntil: null, rateAnswers: 0, queued: 0 };
    const paused = now < pace.pausedUntil;
    return {
      state: pace.state ?? (paused ? 'paused' : 'ok'),
      reason: pace.state ? pace.reason : paused ? 'the network answered rate-overlimit' : null,
      pausedUntil: paused ? new Date(pace.pausedUntil) : null,
      rateAnswers: pace.rateAnswers,
      queued: pace.reserved.size,
    };
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  stats(now = Date.now()): { paused: number; waiting: number } {
    let paused = 0;
    let waiting = 0;
    for (const pace of this.sessions.values()) {
      if (now < pace.pausedUntil) paused += 1;
      waiting += pace.reserved.size;
    }
    return { paused, waiting };
  }
}
