import { describe, expect, it } from 'vitest';
import { ButtonGuard } from '../../src/runtime/button-guard.ts';

describe('button guard', () => {
  it('disables buttons for a session after repeated refusals, then allows them after the cooldown', () => {
    let now = 0;
    const guard = new ButtonGuard(true, 3, 1_000, () => now);
    guard.failed('s');
    guard.failed('s');
    expect(guard.allows('s')).toBe(true);
    guard.failed('s');
    expect(guard.allows('s')).toBe(false);
    expect(guard.allows('other')).toBe(true);
    now = 1_000;
    expect(guard.allows('s')).toBe(true);
  });

  it('forgets refusals older than its window, and never allows buttons when switched off', () => {
    let now = 0;
    const guard = new ButtonGuard(true, 2, 1_000, () => now, 500);
    guard.failed('s');
    now = 600;
    guard.failed('s');
    expect(guard.allows('s')).toBe(true);
    expect(new ButtonGuard(false, 2, 1_000).allows('s')).toBe(false);
  });
});
