import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryReclaim } from '../../src/runtime/memory-reclaim.ts';

const MB = 1024 * 1024;

/** A thread whose busy share and process memory the test sets, with a clock it moves. */
const fakeThread = () => {
  const state = { rss: 300 * MB, busy: 0, now: 0, collections: 0, freedTo: 300 * MB };
  const reclaim = createMemoryReclaim({
    logger: pino({ level: 'silent' }),
    rss: () => state.rss,
    utilization: () => state.busy,
    now: () => state.now,
    collect: () => {
      state.collections += 1;
      state.rss = state.freedTo;
    },
  });
  return { state, reclaim };
};

describe('giving memory back after a busy period', () => {
  it('collects once the thread is quiet after the process grew, and not again until it grows again', () => {
    const { state, reclaim } = fakeThread();
    // sustained traffic: the process grows while the thread is busy
    state.busy = 0.6;
    state.rss = 600 * MB;
    expect(reclaim.check()).toBe(false);
    state.now += 10_000;
    // the traffic stops
    state.busy = 0.01;
    state.freedTo = 320 * MB;
    expect(reclaim.check()).toBe(true);
    expect(state.collections).toBe(1);
    expect(state.rss).toBe(320 * MB);
    // quiet, no new growth: nothing more
    for (let i = 0; i < 10; i++) {
      state.now += 10_000;
      expect(reclaim.check()).toBe(false);
    }
    // a second burst, long after the first collection
    state.now += 120_000;
    state.rss = 420 * MB;
    expect(reclaim.check()).toBe(true);
    expect(state.collections).toBe(2);
  });

  it('never collects while the thread is busy, however much the process grew', () => {
    const { state, reclaim } = fakeThread();
    state.busy = 0.15;
    for (let i = 0; i < 20; i++) {
      state.rss += 100 * MB;
      state.now += 10_000;
      expect(reclaim.check()).toBe(false);
    }
    expect(state.collections).toBe(0);
  });

  it('leaves a quiet thread alone when the process did not grow, or came back down by itself', () => {
    const { state, reclaim } = fakeThread();
    state.busy = 0;
    state.rss = 307 * MB;
    expect(reclaim.check()).toBe(false);
    // down by itself (another thread's collection), then back up by less than the threshold (8 MB) from that low point
    state.rss = 250 * MB;
    expect(reclaim.check()).toBe(false);
    state.rss = 257 * MB;
    expect(reclaim.check()).toBe(false);
    expect(state.collections).toBe(0);
    // from the low point, growth past the threshold counts
    state.rss = 258 * MB;
    expect(reclaim.check()).toBe(true);
  });

  it('waits a minute between two collections', () => {
    const { state, reclaim } = fakeThread();
    state.busy = 0;
    state.rss = 400 * MB;
    state.freedTo = 300 * MB;
    expect(reclaim.check()).toBe(true);
    state.rss = 400 * MB;
    state.now += 30_000;
    expect(reclaim.check()).toBe(false);
    state.now += 30_000;
    expect(reclaim.check()).toBe(true);
  });

  it('logs what each periodic collection gave back at debug, so an info log does not show a line per busy period', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let rss = 400 * MB;
    const reclaim = createMemoryReclaim({ logger, rss: () => rss, utilization: () => 0, collect: () => (rss = 300 * MB), now: () => 0 });
    rss = 500 * MB;
    expect(reclaim.check()).toBe(true);
    expect(lines.map((l) => [l.level, l.msg, l.rssBeforeMb, l.rssAfterMb])).toEqual([
      [20, 'quiet after a busy period: memory given back', 500, 300],
    ]);
  });

  it("runs V8's memory-reducing collection on this thread", () => {
    let rss = 300 * MB;
    const reclaim = createMemoryReclaim({ logger: pino({ level: 'silent' }), rss: () => rss, utilization: () => 0 });
    rss = 400 * MB;
    expect(reclaim.check()).toBe(true);
  });
});
