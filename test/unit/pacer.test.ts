import { describe, expect, it } from 'vitest';
import { waitForSlot } from '../../src/resolvers/pacing.ts';
import { SessionPacer } from '../../src/runtime/pacer.ts';
import type { PaceRules } from '../../src/runtime/ports/pacer.ts';

const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);
const rules = (over: Partial<PaceRules> = {}): PaceRules => ({
  intervalMs: 1_000,
  jitterMs: 0,
  perChatMs: 3_000,
  typingMsPerChar: 0,
  typingMaxMs: 5_000,
  warmupCaps: [],
  linkedAt: null,
  ...over,
});
const pacer = (random = () => 0) =>
  new SessionPacer({ enabled: true, backoffBaseMs: 60_000, backoffMaxMs: 240_000, backoffResetMs: 600_000, random });

describe('send pacer', () => {
  it('spaces a session by the interval plus jitter, and a chat by its own spacing, keeping each chat in order', () => {
    const p = pacer(() => 0.5);
    const r = rules({ jitterMs: 400 });
    expect(p.slot('s', 'a', r, 5, 'm1', T0)).toEqual({ at: T0, typingMs: 0 });
    p.take('s', 'm1', T0);
    // the interval (1000) plus half the jitter (200)
    expect(p.slot('s', 'b', r, 5, 'm2', T0).at).toBe(T0 + 1_200);
    // chat a again: its own spacing (3000 after its last) is later than the session's next slot (2400)
    expect(p.slot('s', 'a', r, 5, 'm3', T0).at).toBe(T0 + 3_000);
    // another session is not held back
    expect(p.slot('other', 'a', r, 5, 'x', T0).at).toBe(T0);
    // a record keeps the slot it was given
    expect(p.slot('s', 'a', r, 5, 'm3', T0 + 10).at).toBe(T0 + 3_000);
    expect(p.health('s', T0).queued).toBe(2);
    p.release('s', 'm3');
    expect(p.health('s', T0).queued).toBe(1);
  });

  it('with no interval and no spacing, sends leave at once, but never before a message of the same chat still waiting', () => {
    const p = pacer();
    const idle = rules({ intervalMs: 0, perChatMs: 0 });
    for (let i = 0; i < 5; i += 1) {
      expect(p.slot('s', `c${i}`, idle, 5, `m${i}`, T0).at).toBe(T0);
      p.take('s', `m${i}`, T0);
    }
    expect(p.stats(T0)).toEqual({ paused: 0, waiting: 0 });
    p.rateAnswer('s', T0);
    const first = p.slot('s', 'c', idle, 5, 'q1', T0).at;
    const second = p.slot('s', 'c', idle, 5, 'q2', T0).at;
    expect(first).toBe(T0 + 60_000);
    expect(second).toBeGreaterThan(first);
  });

  it('checks a waiting slot again when its job fires: a late job keeps the spacing after what went, and never overtakes its chat', () => {
    const p = pacer();
    const r = rules();
    expect(p.slot('s', 'a', r, 1, 'm1', T0).at).toBe(T0);
    p.take('s', 'm1', T0);
    const two = p.slot('s', 'a', r, 1, 'm2', T0).at;
    const three = p.slot('s', 'a', r, 1, 'm3', T0).at;
    expect([two, three]).toEqual([T0 + 3_000, T0 + 6_000]);
    // m3's job fires on time while m2's is late: m3 waits for m2
    expect(p.slot('s', 'a', r, 1, 'm3', three).at).toBe(three + 250);
    // m2 goes 500 ms late, then m3 keeps its 3 s after it
    expect(p.slot('s', 'a', r, 1, 'm2', two + 500).at).toBe(two);
    p.take('s', 'm2', two + 500);
    expect(p.slot('s', 'a', r, 1, 'm3', three + 250).at).toBe(two + 500 + 3_000);
    expect(p.slot('s', 'a', r, 1, 'm3', two + 3_500).at).toBe(two + 3_500);
    p.take('s', 'm3', two + 3_500);
    expect(p.health('s', two + 3_500).queued).toBe(0);
  });

  it('sizes "typing…" to the text, bounded, and counts it in the spacing', () => {
    const p = pacer();
    const r = rules({ typingMsPerChar: 50, typingMaxMs: 2_000 });
    expect(p.slot('s', 'a', r, 10, 'm1', T0)).toEqual({ at: T0, typingMs: 500 });
    // next slot: after the typing (500) and the interval (1000)
    expect(p.slot('s', 'b', r, 100, 'm2', T0)).toEqual({ at: T0 + 1_500, typingMs: 2_000 });
  });

  it("caps a newly linked number's sends per day, and lets the rest go on the next day", () => {
    const p = pacer();
    const r = rules({ intervalMs: 0, perChatMs: 0, warmupCaps: [2, 3], linkedAt: new Date(T0 - 3_600_000) });
    const linked = T0 - 3_600_000;
    expect(p.slot('s', 'a', r, 1, 'm1', T0).at).toBe(T0);
    expect(p.slot('s', 'b', r, 1, 'm2', T0).at).toBe(T0);
    // day 0 is full: day 1 begins a day after the linking
    expect(p.slot('s', 'c', r, 1, 'm3', T0).at).toBe(linked + DAY);
    expect(p.slot('s', 'd', r, 1, 'm4', T0).at).toBe(linked + DAY);
    expect(p.slot('s', 'e', r, 1, 'm5', T0).at).toBe(linked + DAY);
    expect(p.slot('s', 'f', r, 1, 'm6', T0).at).toBe(linked + 2 * DAY);
    // past the last capped day there is no cap
    for (let i = 0; i < 10; i += 1) expect(p.slot('s', `g${i}`, r, 1, `n${i}`, T0).at).toBe(linked + 2 * DAY);
  });

  it('pauses on a rate answer, moves the waiting records behind the pause in order, and backs off exponentially', () => {
    const p = pacer();
    const r = rules();
    p.slot('s', 'a', r, 1, 'm1', T0);
    p.take('s', 'm1', T0);
    const m2 = p.slot('s', 'b', r, 1, 'm2', T0).at;
    const m3 = p.slot('s', 'c', r, 1, 'm3', T0).at;
    const until = p.rateAnswer('s', T0 + 100).getTime();
    expect(until).toBe(T0 + 100 + 60_000);
    // more answers of the same burst do not lengthen the pause
    expect(p.rateAnswer('s', T0 + 200).getTime()).toBe(until);
    expect(p.health('s', T0 + 200)).toMatchObject({ state: 'paused', rateAnswers: 2, queued: 2 });
    const moved2 = p.slot('s', 'b', r, 1, 'm2', T0 + 300).at;
    const moved3 = p.slot('s', 'c', r, 1, 'm3', T0 + 300).at;
    expect(moved2).toBe(until);
    expect(moved3 - moved2).toBe(m3 - m2);
    // the first message that goes after the pause says the session is back, once
    expect(p.take('s', 'm2', until)).toBe(true);
    expect(p.health('s', until).state).toBe('ok');
    expect(p.take('s', 'm3', moved3)).toBe(false);
    // an answer soon after the pause doubles it; one long after starts again from the base
    expect(p.rateAnswer('s', until + 1_000).getTime()).toBe(until + 1_000 + 120_000);
    expect(p.rateAnswer('s', until + 1_000 + 120_000 + 700_000).getTime()).toBe(until + 1_000 + 120_000 + 700_000 + 60_000);
    expect(p.stats(until + 1_000 + 120_000 + 700_000)).toEqual({ paused: 1, waiting: 0 });
  });

  it('puts a message refused for the rate back first of its chat, behind the pause: the chat keeps its order', () => {
    const p = pacer();
    const r = rules();
    expect(p.slot('s', 'a', r, 1, 'm1', T0).at).toBe(T0);
    p.take('s', 'm1', T0);
    // m2 and m3 wait for their turn in chat a, m4 in chat b
    expect(p.slot('s', 'a', r, 1, 'm2', T0).at).toBe(T0 + 3_000);
    expect(p.slot('s', 'a', r, 1, 'm3', T0).at).toBe(T0 + 6_000);
    expect(p.slot('s', 'b', r, 1, 'm4', T0).at).toBe(T0 + 7_000);
    // m1 left, and the network answered it 429: it goes first once the pause is over
    const until = p.rateAnswer('s', T0 + 100).getTime();
    expect(p.refused('s', 'a', r, 1, 'm1', T0 + 100)).toEqual({ at: until, typingMs: 0 });
    // asked again (its job fired), it keeps that slot; m2's job, even late, waits for m1
    expect(p.slot('s', 'a', r, 1, 'm1', T0 + 200).at).toBe(until);
    expect(p.slot('s', 'a', r, 1, 'm2', until).at).toBe(until + 250);
    // nothing of the session goes during the pause, m1 included
    expect(p.slot('s', 'a', r, 1, 'm1', until - 1).at).toBe(until);
    expect(p.slot('s', 'b', r, 1, 'm4', until - 1).at).toBeGreaterThanOrEqual(until);
    const order: string[] = [];
    let now = until;
    const due = ['m1', 'm2', 'm3'];
    while (due.length > 0) {
      // each job fires when its slot says, the earliest first
      const next = due
        .map((id) => ({ id, at: p.slot('s', 'a', r, 1, id, now).at }))
        .sort((x, y) => x.at - y.at || due.indexOf(x.id) - due.indexOf(y.id))[0];
      if (!next) break;
      now = Math.max(now, next.at);
      if (p.slot('s', 'a', r, 1, next.id, now).at > now) continue;
      p.take('s', next.id, now);
      order.push(next.id);
      due.splice(due.indexOf(next.id), 1);
    }
    expect(order).toEqual(['m1', 'm2', 'm3']);
  });

  it('keeps the order of several messages of a chat refused one after the other', () => {
    const p = pacer();
    const r = rules({ intervalMs: 0, perChatMs: 0 });
    for (const id of ['m1', 'm2']) {
      p.slot('s', 'a', r, 1, id, T0);
      p.take('s', id, T0);
    }
    expect(p.slot('s', 'a', r, 1, 'm3', T0).at).toBe(T0);
    // the answers to m1 and m2 come back in the order they were sent
    const until = p.rateAnswer('s', T0 + 10).getTime();
    p.refused('s', 'a', r, 1, 'm1', T0 + 10);
    p.refused('s', 'a', r, 1, 'm2', T0 + 11);
    // m2 and m3 wait for the one before them; m1 goes first
    expect(p.slot('s', 'a', r, 1, 'm3', until).at).toBeGreaterThan(until);
    expect(p.slot('s', 'a', r, 1, 'm2', until).at).toBeGreaterThan(until);
    expect(p.slot('s', 'a', r, 1, 'm1', until).at).toBe(until);
    p.take('s', 'm1', until);
    // m2 keeps the later time its blocked job was given; m3 still waits for it
    const m2 = p.slot('s', 'a', r, 1, 'm2', until + 1).at;
    expect(p.slot('s', 'a', r, 1, 'm3', m2).at).toBeGreaterThan(m2);
    expect(p.slot('s', 'a', r, 1, 'm2', m2).at).toBe(m2);
    p.take('s', 'm2', m2);
    // its job firing now finds it due
    expect(p.slot('s', 'a', r, 1, 'm3', m2 + 1_000).at).toBeLessThanOrEqual(m2 + 1_000);
  });

  it("counts the warm-up day's messages sent before (read from the database) against its cap, once per linked number", () => {
    const p = pacer();
    const linkedAt = new Date(T0 - 3_600_000);
    const r = rules({ intervalMs: 0, perChatMs: 0, warmupCaps: [3, 5], linkedAt });
    expect(p.warmupCounted('s', linkedAt)).toBe(false);
    // two went on day 0 before a restart
    p.countWarmup('s', linkedAt, 0, 2);
    expect(p.warmupCounted('s', linkedAt)).toBe(true);
    // a second count (two slots asked for at once after the start) changes nothing
    p.countWarmup('s', linkedAt, 0, 2);
    expect(p.slot('s', 'a', r, 1, 'm1', T0).at).toBe(T0);
    expect(p.slot('s', 'b', r, 1, 'm2', T0).at).toBe(linkedAt.getTime() + DAY);
  });

  it('counts a session linked again to another number afresh', () => {
    const p = pacer();
    const before = new Date(T0 - 3_600_000);
    p.countWarmup('s', before, 0, 1);
    const relinked = new Date(T0 - 60_000);
    expect(p.warmupCounted('s', relinked)).toBe(false);
    p.countWarmup('s', relinked, 0, 0);
    const r = rules({ intervalMs: 0, perChatMs: 0, warmupCaps: [1], linkedAt: relinked });
    // the earlier number's count of its day 0 is not the new number's
    expect(p.slot('s', 'c', r, 1, 'm1', T0).at).toBe(T0);
    expect(p.slot('s', 'd', r, 1, 'm2', T0).at).toBe(relinked.getTime() + DAY);
  });

  it('a send waiting for its slot inside the request asks again on waking, and waits out a pause that began meanwhile', async () => {
    const p = new SessionPacer({ enabled: true, backoffBaseMs: 400, backoffMaxMs: 400, backoffResetMs: 600_000, random: () => 0 });
    const r = rules({ intervalMs: 100, perChatMs: 0 });
    const start = Date.now();
    p.slot('s', 'a', r, 1, 'm1', start);
    p.take('s', 'm1', start);
    const first = p.slot('s', 'b', r, 1, 'm2', start);
    expect(first.at).toBe(start + 100);
    let until = 0;
    const answer = setTimeout(() => {
      until = p.rateAnswer('s').getTime();
    }, 20);
    try {
      const slot = await waitForSlot({ now: () => new Date() }, first, async () => p.slot('s', 'b', r, 1, 'm2'));
      expect(until).toBeGreaterThan(start + 100);
      expect(slot.at).toBe(until);
      expect(Date.now()).toBeGreaterThanOrEqual(until);
    } finally {
      clearTimeout(answer);
    }
  });

  it('reports a restriction or a ban until cleared', () => {
    const p = pacer();
    p.mark('s', 'restricted', 'error 463');
    expect(p.health('s', T0)).toMatchObject({ state: 'restricted', reason: 'error 463' });
    p.mark('s', 'ok', null);
    expect(p.health('s', T0)).toMatchObject({ state: 'ok', reason: null });
  });
});
