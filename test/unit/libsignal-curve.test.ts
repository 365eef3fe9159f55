import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Curve } from 'baileys';
import { describe, expect, it, vi } from 'vitest';
import '../../src/runtime/network/libsignal-fix.ts';

interface SignalCurve {
  generateKeyPair: () => { pubKey: Buffer; privKey: Buffer };
  getPublicFromPrivateKey: (privKey: Buffer) => Buffer;
  calculateAgreement: (pubKey: Buffer, privKey: Buffer) => Buffer;
  calculateSignature: (privKey: Buffer, message: Buffer) => Buffer;
  verifySignature: (pubKey: Buffer, message: Buffer, signature: Buffer, isInit?: boolean) => boolean;
}
interface CurveJs {
  sign: (privKey: Uint8Array, message: Uint8Array) => Uint8Array;
  verify: (pubKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;
}

const require = createRequire(import.meta.url);
const curvePath = require.resolve('libsignal/src/curve.js');
const curve = require(curvePath) as SignalCurve;
// libsignal's own module as published, loaded apart from the patched one, and the XEdDSA it signs with
const original = (() => {
  const patched = require.cache[curvePath];
  delete require.cache[curvePath];
  const fresh = require(curvePath) as SignalCurve;
  if (patched) require.cache[curvePath] = patched;
  return fresh;
})();
const curveJs = require('curve25519-js') as CurveJs;

/** A key pair as libsignal made it before: Node's X25519 key generation. */
const nodeKeyPair = () => {
  const { publicKey, privateKey } = generateKeyPairSync('x25519', {
    publicKeyEncoding: { format: 'der', type: 'spki' },
    privateKeyEncoding: { format: 'der', type: 'pkcs8' },
  });
  return { pubKey: Buffer.concat([Buffer.from([5]), publicKey.subarray(12)]), privKey: Buffer.from(privateKey.subarray(16)) };
};

const thrown = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return 'nothing thrown';
};

describe("libsignal's curve on whatsapp-rust-bridge", () => {
  it('is the one libsignal and Baileys call', () => {
    expect(original.calculateSignature).not.toBe(curve.calculateSignature);
    // Baileys reads libsignal's curve at each call (its patch), whichever of the two was loaded first.
    const sign = vi.spyOn(curve, 'calculateSignature');
    const verify = vi.spyOn(curve, 'verifySignature');
    const keyPair = vi.spyOn(curve, 'generateKeyPair');
    try {
      const keys = Curve.generateKeyPair();
      const message = randomBytes(40);
      const signature = Curve.sign(keys.private, message);
      expect(Curve.verify(keys.public, message, signature)).toBe(true);
      expect([keyPair.mock.calls.length, sign.mock.calls.length, verify.mock.calls.length]).toEqual([1, 1, 1]);
      expect(curveJs.verify(keys.public, message, signature)).toBe(true);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('makes key pairs in libsignal’s formats that agree with Node’s X25519 and with libsignal’s own derivation', () => {
    for (let round = 0; round < 50; round++) {
      const ours = curve.generateKeyPair();
      expect(ours.pubKey).toBeInstanceOf(Buffer);
      expect(ours.privKey).toBeInstanceOf(Buffer);
      expect(ours.pubKey.byteLength).toBe(33);
      expect(ours.pubKey[0]).toBe(5);
      expect(ours.privKey.byteLength).toBe(32);
      expect(original.getPublicFromPrivateKey(ours.privKey).equals(ours.pubKey)).toBe(true);
      const theirs = nodeKeyPair();
      const one = original.calculateAgreement(theirs.pubKey, ours.privKey);
      const other = original.calculateAgreement(ours.pubKey, theirs.privKey);
      expect(Buffer.from(one).equals(Buffer.from(other))).toBe(true);
    }
    const seen = new Set(Array.from({ length: 200 }, () => curve.generateKeyPair().privKey.toString('hex')));
    expect(seen.size).toBe(200);
  });

  it('signs so that libsignal’s XEdDSA verifies, and verifies what it signed, with the same answers for altered signatures, messages and keys', () => {
    for (let round = 0; round < 60; round++) {
      const keys = round % 2 === 0 ? curve.generateKeyPair() : nodeKeyPair();
      const message = randomBytes(1 + ((round * 13) % 200));
      const ours = curve.calculateSignature(keys.privKey, message);
      const theirs = original.calculateSignature(keys.privKey, message);
      expect(ours).toBeInstanceOf(Buffer);
      expect(ours.byteLength).toBe(64);
      expect(original.verifySignature(keys.pubKey, message, ours)).toBe(true);
      expect(curve.verifySignature(keys.pubKey, message, ours)).toBe(true);
      expect(curve.verifySignature(keys.pubKey, message, theirs)).toBe(true);
      // A key without the type byte, as libsignal takes it too.
      expect(curve.verifySignature(keys.pubKey.subarray(1), message, theirs)).toBe(
        original.verifySignature(keys.pubKey.subarray(1), message, theirs),
      );

      const signature = Buffer.from(ours);
      const at = round % 64;
      signature[at] = (signature[at] ?? 0) ^ (1 << (round % 8));
      const altered = Buffer.from(message);
      altered[round % altered.byteLength] = (altered[round % altered.byteLength] ?? 0) ^ 1;
      const stranger = curve.generateKeyPair().pubKey;
      for (const [pubKey, text, sig] of [
        [keys.pubKey, message, signature],
        [keys.pubKey, altered, ours],
        [stranger, message, ours],
      ] as const) {
        expect(curve.verifySignature(pubKey, text, sig)).toBe(original.verifySignature(pubKey, text, sig));
      }
    }
  });

  it("refuses what libsignal refuses, with libsignal's messages, and verifies nothing for a session's initial message", () => {
    const keys = curve.generateKeyPair();
    const message = randomBytes(32);
    const signature = curve.calculateSignature(keys.privKey, message);
    const cases: Array<[string, (c: SignalCurve) => unknown]> = [
      ['undefined private key', (c) => c.calculateSignature(undefined as unknown as Buffer, message)],
      ['Uint8Array private key', (c) => c.calculateSignature(new Uint8Array(32) as Buffer, message)],
      ['short private key', (c) => c.calculateSignature(Buffer.alloc(31), message)],
      ['no message to sign', (c) => c.calculateSignature(keys.privKey, undefined as unknown as Buffer)],
      ['Uint8Array public key', (c) => c.verifySignature(new Uint8Array(33) as Buffer, message, signature)],
      [
        'wrong public key type byte',
        (c) => c.verifySignature(Buffer.concat([Buffer.from([6]), keys.pubKey.subarray(1)]), message, signature),
      ],
      ['short public key', (c) => c.verifySignature(Buffer.alloc(20), message, signature)],
      ['no message to verify', (c) => c.verifySignature(keys.pubKey, undefined as unknown as Buffer, signature)],
      ['short signature', (c) => c.verifySignature(keys.pubKey, message, signature.subarray(0, 63))],
    ];
    for (const [what, call] of cases) {
      expect(
        thrown(() => call(curve)),
        what,
      ).toBe(thrown(() => call(original)));
      expect(
        thrown(() => call(curve)),
        what,
      ).not.toBe('nothing thrown');
    }
    expect(curve.verifySignature(keys.pubKey, message, Buffer.alloc(64), true)).toBe(true);
    expect(curve.verifySignature(keys.pubKey, message, Buffer.alloc(64))).toBe(false);
  });
});
