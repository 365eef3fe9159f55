/** How one session paces its sends (its settings over the process defaults; resolvers/pacing.ts). */
export interface PaceRules {
  /** least time between two sends of the session */
  intervalMs: number;
  /** a random extra wait, from 0 to this, added to each interval */
  jitterMs: number;
  /** least time between two sends to the same chat */
  perChatMs: number;
  /** when set, each text shows "typing…" for this long per character first (bounded by typingMaxMs) */
  typingMsPerChar: number;
  typingMaxMs: number;
  /** the warm-up's daily caps, day by day from `linkedAt`; past the last day no cap */
  warmupCaps: number[];
  /** when the number was linked (the warm-up counts its days from here); null before */
  linkedAt: Date | null;
}

/** Where a send stands with the pacer. */
export interface Slot {
  /** ms since the epoch: when it may leave */
  at: number;
  /** how long to show "typing…" first, when the rules ask for it */
  typingMs: number;
}

/** Why a session is not sending freely (session.health). */
export type PaceState = 'ok' | 'paused' | 'restricted' | 'banned';

export interface PaceHealth {
  state: PaceState;
  /** the network's answer that set the state */
  reason: string | null;
  /** while paused: when sending resumes */
  pausedUntil: Date | null;
  /** rate answers received since the process started */
  rateAnswers: number;
  /** sends waiting for their slot in this process */
  queued: number;
}

/**
 * One pacer per process, holding each session's next free slot, its last send per chat, the records
 * waiting for a slot, its warm-up counts and its pause. It belongs with the live links: a session's
 * sends all pass through the process that owns its link. Its state is memory only; the queue itself is
 * the PENDING records, which a restart arms again and which take fresh slots then, and the warm-up's
 * count of the day is taken again from the SENT records when the session's first slot is asked for.
 */
export interface Pacer {
  /** false when SEND_PACING=off: every send leaves at once */
  readonly enabled: boolean;
  /**
   * Takes the next slot of `sessionId` for a message to `chatId` with `chars` characters and holds it for
   * `recordId` until the record is taken or released. A record already holding a slot gets it back,
   * moved later when a pause, the messages that went since, or an earlier message of its chat require.
   */
  slot(sessionId: string, chatId: string, rules: PaceRules, chars: number, recordId?: string, now?: number): Slot;
  /** Whether `recordId` holds a slot (waits for it). */
  holds(sessionId: string, recordId: string): boolean;
  /**
   * Takes slots, in the order given, for records to `chatId` that are due and hold none yet (their jobs
   * have not asked yet), so that a message asking after them goes after them; records holding a slot, or
   * taken lately (their send under way), are left as they are.
   */
  ahead(sessionId: string, chatId: string, rules: PaceRules, records: Array<{ id: string; chars: number }>, now?: number): void;
  /**
   * A record taken (`take`) and then refused by the network for the rate goes back in the queue: behind
   * the pause, ahead of the later messages of its chat already waiting (behind those of its chat refused
   * before it), so the chat keeps its order. Its warm-up count is not taken again.
   */
  refused(sessionId: string, chatId: string, rules: PaceRules, chars: number, recordId: string, now?: number): Slot;
  /**
   * Whether the warm-up's count of the number linked at `linkedAt` has been taken from the database since
   * this process started holding the session (countWarmup).
   */
  warmupCounted(sessionId: string, linkedAt: Date): boolean;
  /**
   * What the database says the number sent on warm-up `day` before this process held the session: the
   * day's cap counts it. Once per linked number; later calls change nothing.
   */
  countWarmup(sessionId: string, linkedAt: Date, day: number, sent: number): void;
  /**
   * The record leaves now (after its typing, if any): the next slots count from here, and its slot is
   * freed. True for the first message to leave after a pause ended (the session is back to sending).
   */
  take(sessionId: string, recordId: string, now?: number): boolean;
  /** A record left the queue without being sent (failed or cancelled): its slot is freed. */
  release(sessionId: string, recordId: string): void;
  /**
   * The network answered with a rate answer: sending pauses, twice as long as the last pause when the
   * last answer is recent, and resumes by itself; the waiting records move behind the pause in their
   * order. Answers arriving during a pause (the rest of a burst in flight) do not lengthen it.
   */
  rateAnswer(sessionId: string, now?: number): Date;
  /** Restricted or banned (or back to ok): kept for the health view. */
  mark(sessionId: string, state: PaceState, reason: string | null): void;
  health(sessionId: string, now?: number): PaceHealth;
  /** the session is gone */
  forget(sessionId: string): void;
  /** across the process: sessions paused now, and records waiting for a slot */
  stats(now?: number): { paused: number; waiting: number };
}
