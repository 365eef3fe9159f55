import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import * as baileys from 'baileys';
import {
  aesDecryptGCM,
  aesDecryptWithIV,
  aesEncryptCTR,
  aesEncryptGCM,
  aesEncrypWithIV,
  DisconnectReason,
  hmacSign,
  MessageRetryManager,
  promiseTimeout,
} from 'baileys';
import { generateSenderSigningKey } from 'baileys/lib/Signal/Group/keyhelper.js';
import { SenderKeyMessage } from 'baileys/lib/Signal/Group/sender-key-message.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The patch adds it to Utils/generics.js; its declarations are rc14's.
const { pooledRandomBytes } = baileys as unknown as { pooledRandomBytes: (size: number) => Buffer };
const root = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const curve = require('libsignal/src/curve.js') as {
  generateKeyPair: () => { pubKey: Buffer; privKey: Buffer };
  calculateSignature: (privKey: Buffer, message: Buffer) => Buffer;
  verifySignature: (pubKey: Buffer, message: Buffer, signature: Buffer, isInit?: boolean) => boolean;
};

describe('docs/baileys-patch.md', () => {
  it('lists exactly the files the patch changes', () => {
    const patch = readFileSync(join(root, 'patches/baileys+7.0.0-rc14.patch'), 'utf8');
    const patched = [...patch.matchAll(/^diff --git a\/node_modules\/baileys\/(\S+) /gm)].map((m) => m[1]);
    const doc = readFileSync(join(root, 'docs/baileys-patch.md'), 'utf8');
    const listed = [...doc.matchAll(/^\| `(lib\/[^`]+)` \|/gm)].map((m) => m[1]);
    expect(patched.length).toBeGreaterThan(0);
    expect([...listed].sort()).toEqual([...new Set(patched)].sort());
    expect(new Set(listed).size).toBe(listed.length);
  });
});

describe("Baileys' group signatures (patched: libsignal's curve as it is at the call)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("makes a sender's signing key with libsignal's curve as it is now", () => {
    const made = vi.spyOn(curve, 'generateKeyPair');
    const key = generateSenderSigningKey();
    expect(made).toHaveBeenCalledTimes(1);
    expect(key.public).toHaveLength(33);
    expect(key.private).toHaveLength(32);
  });

  it("signs and checks a group message with libsignal's curve as it is now", () => {
    const { pubKey, privKey } = curve.generateKeyPair();
    const sign = vi.spyOn(curve, 'calculateSignature');
    const verify = vi.spyOn(curve, 'verifySignature');
    const message = new SenderKeyMessage(7, 3, Buffer.from('hello group'), privKey);
    const received = new SenderKeyMessage(undefined, undefined, undefined, undefined, message.serialize());
    received.verifySignature(pubKey);
    expect([sign.mock.calls.length, verify.mock.calls.length]).toEqual([1, 1]);
    expect(received.getCipherText().toString()).toBe('hello group');
    const tampered = Buffer.from(message.serialize());
    tampered[3] = (tampered[3] ?? 0) ^ 1;
    expect(() => new SenderKeyMessage(undefined, undefined, undefined, undefined, tampered).verifySignature(pubKey)).toThrow(
      'Invalid signature!',
    );
  });
});

describe("Baileys' ciphers and MACs with imported keys (patched)", () => {
  it('gives the bytes Node gives with Buffer keys, and takes a KeyObject as well', () => {
    for (let round = 0; round < 20; round++) {
      const key = randomBytes(32);
      const iv = randomBytes(16);
      const data = randomBytes(round * 13);
      const aad = randomBytes(round);
      for (const given of [key, createSecretKey(key)]) {
        const gcm = createCipheriv('aes-256-gcm', key, iv.subarray(0, 12)).setAAD(aad);
        const gcmExpected = Buffer.concat([gcm.update(data), gcm.final(), gcm.getAuthTag()]);
        const gcmOut = aesEncryptGCM(data, given as Buffer, iv.subarray(0, 12), aad);
        expect(gcmOut.toString('hex')).toBe(gcmExpected.toString('hex'));
        expect(aesDecryptGCM(gcmOut, given as Buffer, iv.subarray(0, 12), aad).equals(data)).toBe(true);
        const ctr = createCipheriv('aes-256-ctr', key, iv);
        expect(aesEncryptCTR(data, given as Buffer, iv).toString('hex')).toBe(
          Buffer.concat([ctr.update(data), ctr.final()]).toString('hex'),
        );
        const cbc = createCipheriv('aes-256-cbc', key, iv);
        const cbcExpected = Buffer.concat([cbc.update(data), cbc.final()]);
        expect(aesEncrypWithIV(data, given as Buffer, iv).toString('hex')).toBe(cbcExpected.toString('hex'));
        const back = createDecipheriv('aes-256-cbc', key, iv);
        expect(aesDecryptWithIV(cbcExpected, given as Buffer, iv).toString('hex')).toBe(
          Buffer.concat([back.update(cbcExpected), back.final()]).toString('hex'),
        );
        expect(hmacSign(data, given as Buffer).toString('hex')).toBe(createHmac('sha256', key).update(data).digest('hex'));
        expect(hmacSign(data, given as Buffer, 'sha512').toString('hex')).toBe(createHmac('sha512', key).update(data).digest('hex'));
      }
    }
    // a tampered GCM tag is refused as before
    const key = randomBytes(32);
    const iv = randomBytes(12);
    const sealed = aesEncryptGCM(Buffer.from('x'), key, iv, Buffer.alloc(0));
    sealed[sealed.length - 1] = (sealed[sealed.length - 1] ?? 0) ^ 1;
    expect(() => aesDecryptGCM(sealed, key, iv, Buffer.alloc(0))).toThrow('Unsupported state or unable to authenticate data');
  });
});

describe("Baileys' small random values (patched: from a pool)", () => {
  it('gives fresh random bytes of the size asked, none sharing memory, across refills of the pool', () => {
    const seen = new Set<string>();
    const out: Buffer[] = [];
    // 16-byte values over more than two 4 KiB pools, then sizes around the pool's limit
    for (let i = 0; i < 600; i++) {
      const value = pooledRandomBytes(16);
      expect(value).toHaveLength(16);
      seen.add(value.toString('hex'));
      out.push(value);
    }
    expect(seen.size).toBe(600);
    for (const size of [1, 32, 255, 256, 257, 5000]) expect(pooledRandomBytes(size)).toHaveLength(size);
    // each value is its own copy: changing one changes no other
    const first = out[0] ?? Buffer.alloc(0);
    const before = out.map((b) => b.toString('hex'));
    first.fill(0);
    expect(out.slice(1).map((b) => b.toString('hex'))).toEqual(before.slice(1));
  });
});

describe("Baileys' promiseTimeout (patched: no stack formatted unless it fires)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('times out with the same error as rc14, and resolves with what the work gives', async () => {
    vi.useFakeTimers();
    const waiting = promiseTimeout<string>(5_000, () => {});
    const outcome = waiting.then(
      () => null,
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(5_000);
    const err = (await outcome) as { message: string; output: { statusCode: number }; data: { stack: string } };
    expect(err.message).toBe('Timed Out');
    expect(err.output.statusCode).toBe(DisconnectReason.timedOut);
    expect(err.data.stack).toContain('baileys-patch.test.ts');
    expect(vi.getTimerCount()).toBe(0);

    const done = promiseTimeout<string>(5_000, (resolve) => resolve('ok'));
    await expect(done).resolves.toBe('ok');
    // the timer goes with the answer
    expect(vi.getTimerCount()).toBe(0);
    const failed = promiseTimeout<string>(5_000, (_resolve, reject) => reject(new Error('refused')));
    await expect(failed).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
    await expect(promiseTimeout<number>(undefined, (resolve) => resolve(1))).resolves.toBe(1);
  });
});

describe("Baileys' message-retry caches (patched: bounded by count through maxSize)", () => {
  it('still keeps at most 512 recent sends, the oldest going first', () => {
    const manager = new MessageRetryManager(pino({ level: 'silent' }), 5);
    for (let i = 0; i < 513; i++) manager.addRecentMessage('1555@s.whatsapp.net', `ID${i}`, { conversation: `text ${i}` });
    expect(manager.getRecentMessage('1555@s.whatsapp.net', 'ID0')).toBeUndefined();
    expect(manager.getRecentMessage('1555@s.whatsapp.net', 'ID1')?.message).toEqual({ conversation: 'text 1' });
    expect(manager.getRecentMessage('1555@s.whatsapp.net', 'ID512')?.message).toEqual({ conversation: 'text 512' });
  });
});
