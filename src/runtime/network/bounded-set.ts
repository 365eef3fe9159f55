/**
 * A set of at most `max` keys that forgets its oldest first. Unlike lru-cache, which allocates its
 * arrays for `max` entries up front (about 90 KB for 4,096), it grows with what it holds: each link
 * keeps a few of these, and most hold a handful of keys for the link's whole life.
 */
export class BoundedSet {
  private readonly keys = new Set<string>();

  constructor(private readonly max: number) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    if (this.keys.has(key)) return;
    if (this.keys.size >= this.max) {
      const oldest = this.keys.values().next();
      if (!oldest.done) this.keys.delete(oldest.value);
    }
    this.keys.add(key);
  }

  delete(key: string): boolean {
    return this.keys.delete(key);
  }
}
