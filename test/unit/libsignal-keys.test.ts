import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import '../../src/runtime/network/libsignal-fix.ts';

const require = createRequire(import.meta.url);
const signalCrypto = require('libsignal/src/crypto.js') as {
  encrypt: (key: Buffer, data: Buffer, iv: Buffer) => Buffer;
  decrypt: (key: Buffer, data: Buffer, iv: Buffer) => Buffer;
  calculateMAC: (key: Buffer, data: Buffer) => Buffer;
  verifyMAC: (data: Buffer, key: Buffer, mac: Buffer, length: number) => void;
};

describe("libsignal's ciphers and MACs with imported keys", () => {
  it('give the bytes libsignal computes with Buffer keys', () => {
    for (let round = 0; round < 40; round++) {
      const key = randomBytes(32);
      const iv = randomBytes(16);
      const data = randomBytes(round * 7);
      const cipher = createCipheriv('aes-256-cbc', key, iv);
      const expected = Buffer.concat([cipher.update(data), cipher.final()]);
      const encrypted = signalCrypto.encrypt(key, data, iv);
      expect(encrypted.toString('hex')).toBe(expected.toString('hex'));
      const decipher = createDecipheriv('aes-256-cbc', key, iv);
      expect(Buffer.concat([decipher.update(encrypted), decipher.final()]).toString('hex')).toBe(data.toString('hex'));
      expect(signalCrypto.decrypt(key, encrypted, iv).toString('hex')).toBe(data.toString('hex'));
      const macKey = round % 5 === 0 ? Buffer.alloc(0) : randomBytes(32);
      const mac = createHmac('sha256', macKey).update(data).digest();
      expect(signalCrypto.calculateMAC(macKey, data).toString('hex')).toBe(mac.toString('hex'));
      expect(() => signalCrypto.verifyMAC(data, macKey, mac.subarray(0, 8), 8)).not.toThrow();
    }
  });

  it("keeps libsignal's refusals: non-Buffer input, a wrong MAC, a wrong MAC length", () => {
    const key = randomBytes(32);
    const data = randomBytes(40);
    const mac = createHmac('sha256', key).update(data).digest().subarray(0, 8);
    expect(() => signalCrypto.calculateMAC('key' as unknown as Buffer, data)).toThrow(TypeError);
    expect(() => signalCrypto.encrypt(key, new Uint8Array(16) as Buffer, randomBytes(16))).toThrow(TypeError);
    expect(() => signalCrypto.verifyMAC(data, key, Buffer.from(mac).fill(0), 8)).toThrow('Bad MAC');
    expect(() => signalCrypto.verifyMAC(data, key, mac.subarray(0, 7), 8)).toThrow('Bad MAC length');
  });
});
