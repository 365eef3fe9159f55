import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/resolvers/context.ts';
import { recordIdFor } from '../../src/resolvers/idempotency.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('record ids without an Idempotency-Key', () => {
  it('are distinct UUIDs of version 7 that start with the time they were made', () => {
    const ctx = {} as RequestContext;
    const before = Date.now();
    // more than one 4 KiB pool of random bytes
    const ids = Array.from({ length: 1_000 }, () => recordIdFor(ctx));
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(UUID_V7);
      const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(after);
    }
  });
});
