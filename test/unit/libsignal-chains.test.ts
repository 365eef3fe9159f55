import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import '../../src/runtime/network/libsignal-fix.ts';

// libsignal ships no types for its internals; the few calls used here, typed loosely.
interface KeyPair {
  pubKey: Buffer;
  privKey: Buffer;
}
interface SignalRecord {
  serialize: () => unknown;
  getOpenSession: () => { _chains: { [id: string]: { chainType: number } } } | undefined;
}
interface Libsignal {
  keyhelper: {
    generateIdentityKeyPair: () => KeyPair;
    generateRegistrationId: () => number;
    generateSignedPreKey: (identity: KeyPair, id: number) => { keyId: number; keyPair: KeyPair; signature: Buffer };
    generatePreKey: (id: number) => { keyId: number; keyPair: KeyPair };
  };
  ProtocolAddress: new (id: string, device: number) => unknown;
  SessionBuilder: new (storage: unknown, address: unknown) => { initOutgoing: (bundle: unknown) => Promise<void> };
  SessionCipher: new (
    storage: unknown,
    address: unknown,
  ) => {
    encrypt: (data: Buffer) => Promise<{ type: number; body: Buffer }>;
    decryptPreKeyWhisperMessage: (data: Buffer) => Promise<Buffer>;
    decryptWhisperMessage: (data: Buffer) => Promise<Buffer>;
  };
  SessionRecord: { deserialize: (data: unknown) => SignalRecord };
}
const libsignal = createRequire(import.meta.url)('libsignal') as Libsignal;

const party = (name: string) => {
  const identity = libsignal.keyhelper.generateIdentityKeyPair();
  const registrationId = libsignal.keyhelper.generateRegistrationId();
  const signedPreKey = libsignal.keyhelper.generateSignedPreKey(identity, 1);
  const preKey = libsignal.keyhelper.generatePreKey(1);
  const sessions = new Map<string, unknown>();
  const storage = {
    loadSession: async (id: string) => {
      const stored = sessions.get(id);
      return stored ? libsignal.SessionRecord.deserialize(stored) : undefined;
    },
    storeSession: async (id: string, record: SignalRecord) => {
      sessions.set(id, record.serialize());
    },
    isTrustedIdentity: () => true,
    loadPreKey: async (id: number) => (id === preKey.keyId ? preKey.keyPair : undefined),
    removePreKey: () => undefined,
    loadSignedPreKey: () => signedPreKey.keyPair,
    getOurRegistrationId: () => registrationId,
    getOurIdentity: () => identity,
  };
  const bundle = {
    identityKey: identity.pubKey,
    registrationId,
    preKey: { keyId: preKey.keyId, publicKey: preKey.keyPair.pubKey },
    signedPreKey: { keyId: signedPreKey.keyId, publicKey: signedPreKey.keyPair.pubKey, signature: signedPreKey.signature },
  };
  return { name, storage, bundle, sessions, address: new libsignal.ProtocolAddress(name, 0) };
};

describe('Signal sessions under two-way traffic', () => {
  it('keep their five newest receiving chains and decrypt every message in order', async () => {
    const alice = party('alice');
    const bob = party('bob');
    await new libsignal.SessionBuilder(alice.storage, bob.address).initOutgoing(bob.bundle);
    const toBob = new libsignal.SessionCipher(alice.storage, bob.address);
    const toAlice = new libsignal.SessionCipher(bob.storage, alice.address);
    const received: string[] = [];
    // 30 turns of the conversation: each turn is a ratchet step on both sides.
    for (let turn = 0; turn < 30; turn += 1) {
      const fromAlice = await toBob.encrypt(Buffer.from(`a${turn}`));
      const plainAtBob =
        fromAlice.type === 3
          ? await toAlice.decryptPreKeyWhisperMessage(fromAlice.body)
          : await toAlice.decryptWhisperMessage(fromAlice.body);
      received.push(plainAtBob.toString());
      const fromBob = await toAlice.encrypt(Buffer.from(`b${turn}`));
      received.push((await toBob.decryptWhisperMessage(fromBob.body)).toString());
    }
    expect(received).toEqual(Array.from({ length: 30 }, (_, turn) => [`a${turn}`, `b${turn}`]).flat());
    for (const [who, sessions, peer] of [
      ['alice', alice.sessions, 'bob.0'],
      ['bob', bob.sessions, 'alice.0'],
    ] as const) {
      const session = libsignal.SessionRecord.deserialize(sessions.get(peer)).getOpenSession();
      const receiving = Object.values(session?._chains ?? {}).filter((chain) => chain.chainType === 2);
      expect(receiving.length, who).toBe(5);
    }
  });
});
