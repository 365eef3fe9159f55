import { randomBytes } from 'node:crypto';
import '../network/libsignal-fix.ts';
import { Curve, generateSignalPubKey, signedKeyPair } from 'baileys';
import type { KeyPair } from 'baileys';
import {
  GroupCipher,
  GroupSessionBuilder,
  SenderKeyDistributionMessage,
  SenderKeyName,
  SenderKeyRecord,
} from 'baileys/lib/Signal/Group/index.js';
import { ProtocolAddress, SessionBuilder, SessionCipher, SessionRecord } from 'libsignal';
import type { SignalStorage } from 'libsignal';

export interface PublishedBundle {
  registrationId: number;
  identityPublic: Uint8Array;
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  preKey?: { id: number; publicKey: Uint8Array };
}

const PREKEYS_PER_BATCH = 50;

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const keyPairFrom = (saved: { public: string; private: string }): KeyPair => ({
  public: Buffer.from(saved.public, 'base64'),
  private: Buffer.from(saved.private, 'base64'),
});
const keyPairTo = (pair: KeyPair): { public: string; private: string } => ({ public: b64(pair.public), private: b64(pair.private) });

/** A phone's Signal state as JSON, for a sandbox that keeps its phones across restarts (see state.ts). */
export interface PhoneSignalState {
  signedPreKey: { keyId: number; keyPair: { public: string; private: string }; signature: string };
  preKeys: Array<[number, { public: string; private: string }]>;
  handedOut: number[];
  nextPreKeyId: number;
  /** libsignal's own serialisation of each session record (typed Uint8Array, but a plain JSON object) */
  sessions: Array<[string, unknown]>;
  senderKeys: Array<[string, string]>;
}

/** A virtual phone's Signal state: identity, prekeys and sessions, all in memory. */
export class PhoneSignal {
  private readonly signedPreKey: { keyId: number; keyPair: KeyPair; signature: Uint8Array };
  private readonly preKeys = new Map<number, KeyPair>();
  private readonly sessions = new Map<string, Uint8Array>();
  private readonly senderKeys = new Map<string, string>();
  private readonly senderKeyStore = {
    loadSenderKey: async (name: SenderKeyName) => {
      const raw = this.senderKeys.get(name.toString());
      return raw ? SenderKeyRecord.deserialize(Buffer.from(raw)) : new SenderKeyRecord();
    },
    storeSenderKey: async (name: SenderKeyName, record: SenderKeyRecord) => {
      this.senderKeys.set(name.toString(), JSON.stringify(record.serialize()));
    },
  };
  /** one-time prekeys already given out in a bundle; each is handed to one sender only */
  private readonly handedOut = new Set<number>();
  private nextPreKeyId = 1;
  private readonly storage: SignalStorage;

  constructor(
    private readonly identity: KeyPair,
    readonly registrationId: number,
    saved?: PhoneSignalState,
  ) {
    if (saved) {
      const { keyId, keyPair, signature } = saved.signedPreKey;
      this.signedPreKey = { keyId, keyPair: keyPairFrom(keyPair), signature: Buffer.from(signature, 'base64') };
      for (const [id, pair] of saved.preKeys) this.preKeys.set(id, keyPairFrom(pair));
      for (const id of saved.handedOut) this.handedOut.add(id);
      this.nextPreKeyId = saved.nextPreKeyId;
      for (const [id, record] of saved.sessions) this.sessions.set(id, record as Uint8Array);
      for (const [name, record] of saved.senderKeys) this.senderKeys.set(name, record);
    } else {
      this.signedPreKey = signedKeyPair(identity, 1);
    }
    this.topUp();
    this.storage = {
      loadSession: async (id) => {
        const raw = this.sessions.get(id);
        return raw ? SessionRecord.deserialize(raw) : undefined;
      },
      storeSession: async (id, record) => {
        this.sessions.set(id, record.serialize());
      },
      isTrustedIdentity: () => true,
      loadPreKey: async (id) => {
        const pair = this.preKeys.get(Number(id));
        return pair ? { privKey: Buffer.from(pair.private), pubKey: Buffer.from(generateSignalPubKey(pair.public)) } : undefined;
      },
      removePreKey: (id) => {
        this.preKeys.delete(Number(id));
        this.handedOut.delete(Number(id));
      },
      loadSignedPreKey: () => ({
        privKey: Buffer.from(this.signedPreKey.keyPair.private),
        pubKey: Buffer.from(generateSignalPubKey(this.signedPreKey.keyPair.public)),
      }),
      getOurRegistrationId: () => this.registrationId,
      getOurIdentity: () => ({
        privKey: Buffer.from(this.identity.private),
        pubKey: Buffer.from(generateSignalPubKey(this.identity.public)),
      }),
    };
  }

  state(): PhoneSignalState {
    return {
      signedPreKey: {
        keyId: this.signedPreKey.keyId,
        keyPair: keyPairTo(this.signedPreKey.keyPair),
        signature: b64(this.signedPreKey.signature),
      },
      preKeys: [...this.preKeys].map(([id, pair]) => [id, keyPairTo(pair)]),
      handedOut: [...this.handedOut],
      nextPreKeyId: this.nextPreKeyId,
      sessions: [...this.sessions],
      senderKeys: [...this.senderKeys],
    };
  }

  private topUp(): void {
    while (this.preKeys.size - this.handedOut.size < PREKEYS_PER_BATCH) this.preKeys.set(this.nextPreKeyId++, Curve.generateKeyPair());
  }

  /** What a prekey fetch for this phone answers; the one-time key it names is used once. */
  bundle(): PublishedBundle {
    this.topUp();
    const next = [...this.preKeys.entries()].find(([id]) => !this.handedOut.has(id));
    if (next) this.handedOut.add(next[0]);
    const preKey = next ? { id: next[0], publicKey: next[1].public } : undefined;
    return {
      registrationId: this.registrationId,
      identityPublic: this.identity.public,
      signedPreKey: { keyId: this.signedPreKey.keyId, publicKey: this.signedPreKey.keyPair.public, signature: this.signedPreKey.signature },
      preKey,
    };
  }

  async decrypt(sender: ProtocolAddress, type: string, ciphertext: Uint8Array): Promise<Buffer> {
    if (this.failDecryption) throw new Error('this phone cannot decrypt messages (fault injected)');
    const cipher = new SessionCipher(this.storage, sender);
    const padded = type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(ciphertext) : await cipher.decryptWhisperMessage(ciphertext);
    return unpad(padded);
  }

  /** A sender key a member handed out (inside a pairwise message) for a group or status list. */
  async processSenderKey(groupId: string, sender: ProtocolAddress, distribution: Uint8Array): Promise<void> {
    const name = new SenderKeyName(groupId, sender);
    await new GroupSessionBuilder(this.senderKeyStore).process(
      name,
      new SenderKeyDistributionMessage(null, null, null, null, distribution),
    );
  }

  async decryptGroup(groupId: string, sender: ProtocolAddress, ciphertext: Uint8Array): Promise<Buffer> {
    const plaintext = await new GroupCipher(this.senderKeyStore, new SenderKeyName(groupId, sender)).decrypt(ciphertext);
    return unpad(plaintext);
  }

  /** Fault: every message to this phone fails to decrypt, as on a device whose keys no longer match. */
  failDecryption = false;
  /** Fault: the next session this phone starts names a one-time prekey its peer no longer has. */
  private stalePreKeyNext = false;

  /**
   * Fault: the phone loses its sessions, as after restoring an old backup: the next message from a
   * peer on an old session cannot be decrypted, and its next session is started from a stale prekey,
   * so the peer cannot decrypt that either. Both ends recover through retry receipts.
   */
  loseSessions(): void {
    this.sessions.clear();
    this.stalePreKeyNext = true;
  }

  /**
   * Fault: this many of the phone's next messages reach its peers' linked devices in a form they cannot
   * decrypt (see spoilSession); each device asks for the message again and gets it on a good session.
   */
  undecryptable = 0;

  /** The next message to this device starts a new session naming a prekey the device does not have. */
  spoilSession(recipient: ProtocolAddress): void {
    this.sessions.delete(recipient.toString());
    this.stalePreKeyNext = true;
  }

  /** Forgets the session with a device, so the next message to it starts a new one from a fresh bundle. */
  forgetSession(recipient: ProtocolAddress): void {
    this.sessions.delete(recipient.toString());
  }

  /** Encrypts for a companion, starting a session from its uploaded bundle when there is none. */
  async encrypt(
    recipient: ProtocolAddress,
    plaintext: Uint8Array,
    bundle: () => PublishedBundle,
  ): Promise<{ type: 'pkmsg' | 'msg'; body: Buffer }> {
    if (!this.sessions.has(recipient.toString())) {
      const b = bundle();
      if (this.stalePreKeyNext) {
        this.stalePreKeyNext = false;
        b.preKey = { id: 0xfffff0, publicKey: Curve.generateKeyPair().public };
      }
      await new SessionBuilder(this.storage, recipient).initOutgoing({
        registrationId: b.registrationId,
        identityKey: generateSignalPubKey(b.identityPublic),
        signedPreKey: {
          keyId: b.signedPreKey.keyId,
          publicKey: generateSignalPubKey(b.signedPreKey.publicKey),
          signature: b.signedPreKey.signature,
        },
        preKey: b.preKey
          ? { keyId: b.preKey.id, publicKey: generateSignalPubKey(b.preKey.publicKey) }
          : (undefined as unknown as { keyId: number; publicKey: Uint8Array }),
      });
    }
    const { type, body } = await new SessionCipher(this.storage, recipient).encrypt(pad(plaintext));
    return { type: type === 3 ? 'pkmsg' : 'msg', body: Buffer.from(body, 'binary') };
  }
}

/** Signal addresses as Baileys derives them from JIDs: `<user>[_<domain>].<device>`. */
export const addressOf = (jid: string): ProtocolAddress => {
  const [userPart = '', server = ''] = jid.split('@');
  const [user = '', device = '0'] = userPart.split(':');
  return new ProtocolAddress(server === 'lid' ? `${user}_1` : user, Number(device) || 0);
};

/** WhatsApp pads plaintext with 1 to 16 bytes, each holding the pad length. */
export const pad = (data: Uint8Array): Buffer => {
  const n = (randomBytes(1)[0] & 0x0f) + 1;
  return Buffer.concat([data, Buffer.alloc(n, n)]);
};

export const unpad = (data: Uint8Array): Buffer => {
  const n = data[data.length - 1] ?? 0;
  if (n < 1 || n > 16 || n > data.length) throw new Error('bad message padding');
  return Buffer.from(data.subarray(0, data.length - n));
};
