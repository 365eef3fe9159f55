import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTimerTable } from '../../src/runtime/jobs/workers/timer-table.mjs';

const DAY_MS = 24 * 3600 * 1000;
const NODE_TIMER_LIMIT_MS = 2 ** 31 - 1;

describe('the timer worker table (safe-timers under a fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires a job 30 days ahead at its time, not at once and not at the 24.8-day timer limit', () => {
    const fired: Array<[string, number]> = [];
    const table = createTimerTable((key: string) => fired.push([key, Date.now()]));
    const at = Date.now() + 30 * DAY_MS;
    table.at('far', at, { kind: 'message', messageId: 'm' });
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(NODE_TIMER_LIMIT_MS);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(at - Date.now() - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([['far', at]]);
    expect(table.size()).toBe(0);
  });

  it('fires a year ahead once, and a time already past at once', () => {
    const fired: string[] = [];
    const table = createTimerTable((key: string) => fired.push(key));
    table.at('year', Date.now() + 365 * DAY_MS, {});
    table.at('past', Date.now() - 5000, {});
    expect(fired).toEqual(['past']);
    vi.advanceTimersByTime(365 * DAY_MS - 1);
    expect(fired).toEqual(['past']);
    vi.advanceTimersByTime(10 * DAY_MS);
    expect(fired).toEqual(['past', 'year']);
  });

  it('re-arming a key replaces its timer, and a cleared key never fires', () => {
    const fired: Array<[string, number]> = [];
    const table = createTimerTable((key: string, _job: unknown, at: number) => fired.push([key, at]));
    const start = Date.now();
    table.at('a', start + 40 * DAY_MS, {});
    table.at('a', start + 26 * DAY_MS, {});
    table.at('b', start + 30 * DAY_MS, {});
    table.clear('b');
    vi.advanceTimersByTime(60 * DAY_MS);
    expect(fired).toEqual([['a', start + 26 * DAY_MS]]);
  });
});
