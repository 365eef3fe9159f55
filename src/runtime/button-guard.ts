import type { Buttons } from './ports/limits.ts';

/**
 * Buttons ride on an unofficial protocol extension. After `threshold` refused button sends within
 * `windowMs`, a session sends plain text for `cooldownMs`, then tries buttons again. Refusals arrive
 * after the send returned (as error acks), so a send that returned is no evidence of success.
 */
export class ButtonGuard implements Buttons {
  private readonly failures = new Map<string, number[]>();
  private readonly disabledUntil = new Map<string, number>();

  constructor(
    private readonly enabled: boolean,
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly clock: () => number = Date.now,
    private readonly windowMs = 10 * 60 * 1000,
  ) {}

  allows(sessionId: string): boolean {
    if (!this.enabled) return false;
    const until = this.disabledUntil.get(sessionId);
    if (until === undefined) return true;
    if (this.clock() >= until) {
      this.disabledUntil.delete(sessionId);
      return true;
    }
    return false;
  }

  failed(sessionId: string): void {
    const now = this.clock();
    const recent = [...(this.failures.get(sessionId) ?? []).filter((t) => now - t < this.windowMs), now];
    if (recent.length >= this.threshold) {
      this.failures.delete(sessionId);
      this.disabledUntil.set(sessionId, now + this.cooldownMs);
      return;
    }
    this.failures.set(sessionId, recent);
  }
}
