/**
 * Buttons ride on an unofficial protocol extension. After `threshold` failed button sends in a row a
 * session sends plain text for `cooldownMs`, then tries buttons again.
 */
export class ButtonGuard {
  private readonly failures = new Map<string, number>();
  private readonly disabledUntil = new Map<string, number>();

  constructor(
    private readonly enabled: boolean,
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly clock: () => number = Date.now,
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

  succeeded(sessionId: string): void {
    this.failures.delete(sessionId);
  }

  failed(sessionId: string): void {
    const count = (this.failures.get(sessionId) ?? 0) + 1;
    this.failures.set(sessionId, count);
    if (count >= this.threshold) {
      this.failures.delete(sessionId);
      this.disabledUntil.set(sessionId, this.clock() + this.cooldownMs);
    }
  }
}
