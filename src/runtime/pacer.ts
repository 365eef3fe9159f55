import type { PaceHealth, PaceRules, PaceState, Pacer, Slot } from './ports/pacer.ts';

const DAY_MS = 24 * 3600 * 1000;
/** past this many chats remembered, those whose spacing has passed are dropped */
const CHATS_KEPT = 1_000;
/** a waiting record this long past its slot is taken for gone (failed elsewhere) and stops holding its chat back */
const STALE_MS = 5 * 60_000;
/** how soon a record held back by an earlier one of its chat is looked at again */
const BLOCKED_RETRY_MS = 250;
/** past this many records remembered as gone (taken), the oldest are forgotten */
const TAKEN_KEPT = 1_000;

interface Reserved {
  at: number;
  typingMs: number;
  chatId: string;
  /** taken once and refused by the network for the rate: it keeps its place ahead of its chat's later messages */
  refused?: boolean;
}

interface SessionPace {
  /** the earliest time of the next slot */
  nextAt: number;
  /** each chat's latest slot (the end of its typing) */
  perChat: Map<string, number>;
  /** records waiting for their slot */
  reserved: Map<string, Reserved>;
  /** per chat, its waiting records in the order they must go */
  chatQueues: Map<string, string[]>;
  /** records taken lately, still PENDING in the database until their send's outcome is written */
  taken: Set<string>;
  /** when the session last let a message go, and each chat's last (times kept, not slots planned) */
  lastGone: number;
  goneToChat: Map<string, number>;
  /** slots counted per warm-up day (days since linkedAt) */
  days: Map<number, number>;
  /** the linkedAt (ms) whose warm-up `days` counts, with what the database says was sent before; null until counted */
  warmupOf: number | null;
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

const typingOf = (rules: PaceRules, chars: number): number =>
  rules.typingMsPerChar > 0 ? Math.min(rules.typingMaxMs, chars * rules.typingMsPerChar) : 0;

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
        chatQueues: new Map(),
        taken: new Set(),
        lastGone: Number.NEGATIVE_INFINITY,
        goneToChat: new Map(),
        days: new Map(),
        warmupOf: null,
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
    if (held && recordId !== undefined) return this.heldSlot(pace, recordId, held, rules, now);
    const typingMs = typingOf(rules, chars);
    const lastOfChat = pace.perChat.get(chatId);
    // A chat's messages keep their order: a new one never shares or precedes a slot of the chat still ahead.
    const chatFree =
      lastOfChat === undefined ? 0 : lastOfChat > now ? lastOfChat + Math.max(1, rules.perChatMs) : lastOfChat + rules.perChatMs;
    let at = Math.max(now, pace.nextAt, pace.pausedUntil, chatFree, this.floor(pace, chatId, rules));
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
    if (recordId !== undefined) {
      pace.reserved.set(recordId, { at, typingMs, chatId });
      const queue = pace.chatQueues.get(chatId);
      if (queue) queue.push(recordId);
      else pace.chatQueues.set(chatId, [recordId]);
    }
    return { at, typingMs };
  }

  holds(sessionId: string, recordId: string): boolean {
    return this.sessions.get(sessionId)?.reserved.has(recordId) ?? false;
  }

  ahead(sessionId: string, chatId: string, rules: PaceRules, records: Array<{ id: string; chars: number }>, now = Date.now()): void {
    const pace = this.of(sessionId);
    for (const record of records) {
      if (pace.reserved.has(record.id) || pace.taken.has(record.id)) continue;
      this.slot(sessionId, chatId, rules, record.chars, record.id, now);
    }
  }

  refused(sessionId: string, chatId: string, rules: PaceRules, chars: number, recordId: string, now = Date.now()): Slot {
    const pace = this.of(sessionId);
    pace.taken.delete(recordId);
    const held = pace.reserved.get(recordId);
    if (held) return this.heldSlot(pace, recordId, held, rules, now);
    const typingMs = typingOf(rules, chars);
    // Its warm-up count was taken with its first slot; it goes first when the pause ends.
    const at = Math.max(now, pace.pausedUntil, this.floor(pace, chatId, rules));
    pace.reserved.set(recordId, { at, typingMs, chatId, refused: true });
    const queue = pace.chatQueues.get(chatId) ?? [];
    // Ahead of the chat's later messages, behind those of its chat refused before it (sent before it).
    let place = 0;
    while (place < queue.length && pace.reserved.get(queue[place] ?? '')?.refused) place += 1;
    queue.splice(place, 0, recordId);
    pace.chatQueues.set(chatId, queue);
    pace.perChat.set(chatId, Math.max(pace.perChat.get(chatId) ?? 0, at + typingMs));
    pace.nextAt = Math.max(pace.nextAt, at + typingMs + rules.intervalMs);
    return { at, typingMs };
  }

  warmupCounted(sessionId: string, linkedAt: Date): boolean {
    return this.sessions.get(sessionId)?.warmupOf === linkedAt.getTime();
  }

  countWarmup(sessionId: string, linkedAt: Date, day: number, sent: number): void {
    const pace = this.of(sessionId);
    const linked = linkedAt.getTime();
    if (pace.warmupOf === linked) return;
    // Counts kept for another number (the session was linked again) say nothing of this one.
    if (pace.warmupOf !== null) pace.days.clear();
    pace.warmupOf = linked;
    if (sent > 0) pace.days.set(day, (pace.days.get(day) ?? 0) + sent);
  }

  /** No sooner than the interval after the last message that went, and the chat's spacing after its last. */
  private floor(pace: SessionPace, chatId: string, rules: PaceRules): number {
    return Math.max(pace.lastGone + rules.intervalMs, (pace.goneToChat.get(chatId) ?? Number.NEGATIVE_INFINITY) + rules.perChatMs);
  }

  private gone(pace: SessionPace, chatId: string, at: number): void {
    pace.lastGone = at;
    pace.goneToChat.set(chatId, at);
    if (pace.goneToChat.size > CHATS_KEPT) {
      for (const [chat, last] of pace.goneToChat) if (last < at - DAY_MS) pace.goneToChat.delete(chat);
    }
  }

  /**
   * A waiting record's slot, checked again when its job fires: a job that fired late must not bring it
   * closer to the message before it than the rules allow, nor let it overtake an earlier one of its chat.
   */
  private heldSlot(pace: SessionPace, recordId: string, held: Reserved, rules: PaceRules, now: number): Slot {
    const queue = pace.chatQueues.get(held.chatId) ?? [];
    for (;;) {
      const firstId = queue[0];
      if (firstId === undefined || firstId === recordId) break;
      const first = pace.reserved.get(firstId);
      if (first && first.at + STALE_MS > now) {
        // Its turn comes after the earlier one, whose own job may be late: asked again shortly.
        held.at = Math.max(held.at, first.at + 1, now + BLOCKED_RETRY_MS);
        return { at: held.at, typingMs: held.typingMs };
      }
      queue.shift();
      pace.reserved.delete(firstId);
    }
    held.at = Math.max(held.at, pace.pausedUntil, this.floor(pace, held.chatId, rules));
    return { at: held.at, typingMs: held.typingMs };
  }

  take(sessionId: string, recordId: string, now = Date.now()): boolean {
    const pace = this.sessions.get(sessionId);
    const held = pace?.reserved.get(recordId);
    if (!pace || !held) return false;
    this.gone(pace, held.chatId, now + held.typingMs);
    this.release(sessionId, recordId);
    pace.taken.add(recordId);
    if (pace.taken.size > TAKEN_KEPT) pace.taken.delete(pace.taken.values().next().value ?? recordId);
    const resumed = pace.pausedUntil > 0 && now >= pace.pausedUntil;
    if (resumed) pace.pausedUntil = 0;
    return resumed;
  }

  release(sessionId: string, recordId: string): void {
    const pace = this.sessions.get(sessionId);
    pace?.taken.delete(recordId);
    const held = pace?.reserved.get(recordId);
    if (!pace || !held) return;
    pace.reserved.delete(recordId);
    const queue = pace.chatQueues.get(held.chatId);
    if (!queue) return;
    const index = queue.indexOf(recordId);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) pace.chatQueues.delete(held.chatId);
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
