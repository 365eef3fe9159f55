import { createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import '../../src/runtime/network/libsignal-fix.ts';

const require = createRequire(import.meta.url);
const { deriveSecrets } = require('libsignal/src/crypto.js') as {
  deriveSecrets: (input: Buffer, salt: Buffer, info: Buffer, chunks?: number) => Buffer[];
};

/** libsignal 6.0.0's own derivation, as it computes it: PRK = HMAC(salt, input), then T(i) = HMAC(PRK, T(i-1) || info || i). */
const reference = (input: Buffer, salt: Buffer, info: Buffer, chunks: number): Buffer[] => {
  const prk = createHmac('sha256', salt).update(input).digest();
  const out: Buffer[] = [];
  for (let i = 1; i <= chunks; i++) {
    out.push(
      createHmac('sha256', prk)
        .update(Buffer.concat([out[i - 2] ?? Buffer.alloc(0), info, Buffer.from([i])]))
        .digest(),
    );
  }
  return out;
};

describe("libsignal's key derivation in one native HKDF call", () => {
  it('gives the same keys as libsignal for every chunk count, salt and input', () => {
    for (let round = 0; round < 50; round++) {
      const input = randomBytes(32 + (round % 3) * 16);
      const salt = round % 2 ? Buffer.alloc(32) : randomBytes(32);
      const info = Buffer.from(['WhisperMessageKeys', 'WhisperRatchet', 'WhisperText'][round % 3] ?? '');
      for (const chunks of [1, 2, 3]) {
        const got = deriveSecrets(input, salt, info, chunks);
        expect(got.map((b) => b.toString('hex'))).toEqual(reference(input, salt, info, chunks).map((b) => b.toString('hex')));
        for (const key of got) expect(key.byteLength).toBe(32);
      }
    }
    expect(deriveSecrets(randomBytes(32), Buffer.alloc(32), Buffer.from('x'))).toHaveLength(3);
  });

  it("keeps libsignal's refusals of a bad salt or chunk count", () => {
    expect(() => deriveSecrets(randomBytes(32), Buffer.alloc(16), Buffer.from('x'))).toThrow('salt');
    expect(() => deriveSecrets(randomBytes(32), Buffer.alloc(32), Buffer.from('x'), 4)).toThrow();
  });
});
