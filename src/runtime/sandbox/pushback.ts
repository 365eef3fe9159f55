import type { BinaryNode } from 'baileys';

/** At most `messages` message stanzas and `usync` usync queries per `windowMs`, per linked number; an absent limit is no limit. */
export interface RateLimit {
  messages?: number;
  usync?: number;
  windowMs: number;
}

export interface BanOptions {
  /** a temporary ban (`<failure reason="402">`, with `code` and `expire`) instead of a permanent one */
  temporary?: boolean;
  /** how long it lasts; absent, until lifted (a temporary ban then tells the client no expiry, `expire="0"`) */
  ms?: number;
  /** the permanent ban's failure reason: 403 (rc14's `DisconnectReason.forbidden`, the default) or 406 */
  reason?: 403 | 406;
  /** the temporary ban's reason code (whatsmeow's `TempBanReason`; default 101, "sent too many messages to people who don't have you in their address books") */
  code?: number;
}

/** What the network holds against a linked number, and how often it pushed back. */
export interface PushbackView {
  rate: RateLimit | null;
  /** while restricted: when it ends (null: until lifted) */
  restriction: { until: string | null } | null;
  ban: { temporary: boolean; reason: number; code?: number; until: string | null } | null;
  /** how many of this number's stanzas and logins the network refused, by kind */
  refused: { messages: number; usync: number; newChats: number; logins: number };
  /** the numbers it has exchanged 1:1 messages with (a restriction lets these chats go on) */
  chats: string[];
}

interface Ban {
  temporary: boolean;
  reason: number;
  code: number;
  until?: number;
}

class NumberState {
  rate?: RateLimit;
  /** when each message (and usync query) the rate let through was taken, oldest first */
  readonly messagesAt: number[] = [];
  readonly usyncAt: number[] = [];
  /** restricted until (ms since the epoch; Infinity until lifted) */
  restrictedUntil = 0;
  ban?: Ban;
  readonly refused = { messages: 0, usync: 0, newChats: 0, logins: 0 };
  readonly chats = new Set<string>();
}

/** Lets a stanza through a sliding window if fewer than `limit` were let through within it; records it when it is. */
const admit = (times: number[], limit: number | undefined, windowMs: number, now: number): boolean => {
  if (limit === undefined) return true;
  while (times.length > 0 && (times[0] ?? 0) <= now - windowMs) times.shift();
  if (times.length >= limit) return false;
  times.push(now);
  return true;
};

/**
 * How the network pushes back on a linked number (see docs/sandbox.md, "Push-back"): a rate past which
 * its sends and usync queries are refused, a restriction that refuses new 1:1 chats, and a ban that
 * ends its links and refuses its logins. Only the chats are kept in the state file; the rest is set by
 * tests and lives in memory.
 */
export class Pushback {
  private readonly numbers = new Map<string, NumberState>();

  private of(number: string): NumberState {
    let state = this.numbers.get(number);
    if (!state) {
      state = new NumberState();
      this.numbers.set(number, state);
    }
    return state;
  }

  setRate(number: string, rate: RateLimit | undefined): void {
    const state = this.of(number);
    state.rate = rate;
    // a new rate starts from an empty window, so a test sets it and counts from there
    state.messagesAt.length = 0;
    state.usyncAt.length = 0;
  }

  restrict(number: string, ms?: number): void {
    this.of(number).restrictedUntil = ms === undefined ? Number.POSITIVE_INFINITY : Date.now() + ms;
  }

  liftRestriction(number: string): void {
    this.of(number).restrictedUntil = 0;
  }

  ban(number: string, options: BanOptions = {}): void {
    this.of(number).ban = {
      temporary: options.temporary ?? false,
      reason: options.temporary ? 402 : (options.reason ?? 403),
      code: options.code ?? 101,
      ...(options.ms === undefined ? {} : { until: Date.now() + options.ms }),
    };
  }

  unban(number: string): void {
    this.of(number).ban = undefined;
  }

  /** Whether one more message stanza from this number is within its rate (and counts it if so). */
  admitMessage(number: string): boolean {
    const state = this.of(number);
    if (!state.rate || admit(state.messagesAt, state.rate.messages, state.rate.windowMs, Date.now())) return true;
    state.refused.messages += 1;
    return false;
  }

  admitUsync(number: string): boolean {
    const state = this.of(number);
    if (!state.rate || admit(state.usyncAt, state.rate.usync, state.rate.windowMs, Date.now())) return true;
    state.refused.usync += 1;
    return false;
  }

  /** Whether a restricted number's 1:1 message to `contact` starts a new chat, which the network refuses (and counts). */
  refusesNewChat(number: string, contact: string): boolean {
    const state = this.of(number);
    if (state.restrictedUntil <= Date.now() || state.chats.has(contact)) return false;
    state.refused.newChats += 1;
    return true;
  }

  /** Two numbers exchanged a 1:1 message: their chat exists from now on, for both. */
  noteChat(a: string, b: string): void {
    if (a === b) return;
    this.of(a).chats.add(b);
    this.of(b).chats.add(a);
  }

  /** The numbers this one has a 1:1 chat with (what the state file keeps of push-back). */
  chatsOf(number: string): string[] {
    return [...(this.numbers.get(number)?.chats ?? [])];
  }

  restoreChats(number: string, chats: string[]): void {
    for (const other of chats) this.noteChat(number, other);
  }

  private activeBan(number: string): Ban | undefined {
    const state = this.numbers.get(number);
    if (state?.ban?.until !== undefined && state.ban.until <= Date.now()) state.ban = undefined;
    return state?.ban;
  }

  isBanned(number: string): boolean {
    return this.activeBan(number) !== undefined;
  }

  /** The `<failure>` a banned number's login gets instead of `<success>` (and counts), or undefined when it may log in. */
  loginRefusal(number: string): BinaryNode | undefined {
    const ban = this.activeBan(number);
    if (!ban) return undefined;
    this.of(number).refused.logins += 1;
    if (!ban.temporary) return { tag: 'failure', attrs: { reason: String(ban.reason), location: 'sbx' } };
    const expire = ban.until === undefined ? 0 : Math.max(1, Math.ceil((ban.until - Date.now()) / 1000));
    return { tag: 'failure', attrs: { reason: '402', location: 'sbx', code: String(ban.code), expire: String(expire) } };
  }

  view(number: string): PushbackView {
    const state = this.of(number);
    const ban = this.activeBan(number);
    const restricted = state.restrictedUntil > Date.now();
    return {
      rate: state.rate ? { ...state.rate } : null,
      restriction: restricted
        ? { until: Number.isFinite(state.restrictedUntil) ? new Date(state.restrictedUntil).toISOString() : null }
        : null,
      ban: ban
        ? {
            temporary: ban.temporary,
            reason: ban.reason,
            ...(ban.temporary ? { code: ban.code } : {}),
            until: ban.until === undefined ? null : new Date(ban.until).toISOString(),
          }
        : null,
      refused: { ...state.refused },
      chats: [...state.chats],
    };
  }
}
