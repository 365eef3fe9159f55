import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { SessionCipher, SessionRecord } from 'libsignal';
import {
  calculateSignature as signXeddsa,
  generateKeyPair as generateCurveKeyPair,
  verifySignature as verifyXeddsa,
} from 'whatsapp-rust-bridge';

/**
 * libsignal 6.0.0 (the Signal implementation Baileys uses, and the sandbox's phones with it) tries a
 * message against each session of a record in turn, most recently used first, and steps the ratchet of
 * each session it tries before checking the message's MAC. A message for an older session (which the
 * other end still uses while a new one is being set up) therefore corrupts the newer session before it
 * decrypts with the older one, and the record is stored with the damage: from then on the two ends
 * disagree ("Bad MAC" on one side, "No matching sessions" on the other). Baileys sets up a new session
 * with every contact each time its device list expires (every 5 minutes), so under two-way traffic this
 * lost messages every few minutes. Here each attempt runs on a copy, and only the copy that decrypted
 * replaces the session, as Signal's other implementations do.
 *
 * Applied once per thread, on import, before any socket or virtual phone decrypts. Below it, a bound on
 * the receiving chains a session keeps.
 */
interface Entry {
  serialize: () => unknown;
  indexInfo: { used: number };
  pendingPreKey?: unknown;
}
interface CipherInternals {
  doDecryptWhisperMessage: (data: Buffer, session: Entry) => Promise<Buffer>;
}
interface ChainHolder {
  _chains: Record<string, { chainType: number }>;
}

const require = createRequire(import.meta.url);
const { SessionError } = require('libsignal/src/errors.js') as { SessionError: new (message: string) => Error };
const Entry = (SessionRecord as unknown as { createEntry: () => { constructor: { deserialize: (data: unknown) => Entry } } }).createEntry()
  .constructor;
const prototype = SessionCipher.prototype as unknown as CipherInternals & {
  decryptWithSessions: (data: Buffer, sessions: Entry[]) => Promise<{ session: Entry; plaintext: Buffer }>;
  maybeStepRatchet: (session: ChainHolder, remoteKey: Buffer, previousCounter: number) => void;
  __triesOnCopies?: true;
};

/** Signal's own implementations keep this many receiving chains per session (libsignal's MAX_RECEIVER_CHAINS). */
const MAX_RECEIVING_CHAINS = 5;
const RECEIVING = 2;

if (!prototype.__triesOnCopies) {
  prototype.__triesOnCopies = true;
  prototype.decryptWithSessions = async function decryptWithSessions(this: CipherInternals, data, sessions) {
    if (sessions.length === 0) throw new SessionError('No sessions available');
    for (const session of sessions) {
      // With one session a failure stores nothing (the caller throws), so no copy is needed.
      const trial = sessions.length === 1 ? session : Entry.deserialize(session.serialize());
      try {
        const plaintext = await this.doDecryptWhisperMessage(data, trial);
        trial.indexInfo.used = Date.now();
        if (trial !== session) {
          if (!('pendingPreKey' in trial) || trial.pendingPreKey === undefined) delete session.pendingPreKey;
          Object.assign(session, trial);
        }
        return { session, plaintext };
      } catch {
        // the next session may be the one the message was encrypted for
      }
    }
    throw new SessionError('No matching sessions found for message');
  };

  // libsignal 6.0.0 closes the previous receiving chain at each ratchet step (each time a conversation
  // turns around) but never deletes it, so a session under two-way traffic grows by a chain per turn
  // without end: thousands after ten minutes of the soak, held in memory by every cached copy of the
  // record and written back whole with each message. As Signal's other implementations do, only the
  // newest receiving chains are kept (chains are held in insertion order, oldest first, also after a
  // reload); a message for an older chain can no longer be decrypted, as there.
  const stepRatchet = prototype.maybeStepRatchet;
  prototype.maybeStepRatchet = function maybeStepRatchet(this: unknown, session, remoteKey, previousCounter) {
    stepRatchet.call(this, session, remoteKey, previousCounter);
    const receiving = Object.keys(session._chains).filter((id) => session._chains[id]?.chainType === RECEIVING);
    for (const id of receiving.slice(0, Math.max(0, receiving.length - MAX_RECEIVING_CHAINS))) delete session._chains[id];
  };
}

/**
 * libsignal derives every message's keys with its own HKDF: four `createHmac` calls, each of which
 * imports its Buffer key anew (about 10 µs apiece on Node 24, most of an HMAC's cost). The same RFC 5869
 * HKDF-SHA256 in one native call gives the same bytes at about a fifth of the CPU.
 */
interface SignalCrypto {
  deriveSecrets: (input: Buffer, salt: Buffer, info: Buffer, chunks?: number) => Buffer[];
  encrypt: (key: Buffer, data: Buffer, iv: Buffer) => Buffer;
  decrypt: (key: Buffer, data: Buffer, iv: Buffer) => Buffer;
  calculateMAC: (key: Buffer, data: Buffer) => Buffer;
  verifyMAC: (data: Buffer, key: Buffer, mac: Buffer, length: number) => void;
  __nativeHkdf?: true;
  __keyObjects?: true;
}
const signalCrypto = require('libsignal/src/crypto.js') as SignalCrypto;
if (!signalCrypto.__nativeHkdf) {
  signalCrypto.__nativeHkdf = true;
  const derive = signalCrypto.deriveSecrets;
  signalCrypto.deriveSecrets = (input, salt, info, chunks = 3) => {
    // libsignal's own checks (Buffers, a 32-byte salt, 1 to 3 chunks) stay its own.
    if (
      !(input instanceof Buffer) ||
      !(salt instanceof Buffer) ||
      !(info instanceof Buffer) ||
      salt.byteLength !== 32 ||
      chunks < 1 ||
      chunks > 3
    )
      return derive(input, salt, info, chunks);
    // The input as a KeyObject: hkdfSync checks it the way createHmac does (below).
    const out = Buffer.from(hkdfSync('sha256', createSecretKey(input), salt, info, 32 * chunks));
    return Array.from({ length: chunks }, (_, i) => Buffer.from(out.subarray(32 * i, 32 * (i + 1))));
  };
}

/**
 * Node 24's `createHmac` and `createCipheriv` first ask whether the key is a KeyObject by reading a
 * private slot inside try/catch, so a Buffer key costs a thrown and caught TypeError, stack capture
 * included: 18 µs for an HMAC that takes 3 µs with a KeyObject (5 µs with the key imported first).
 * libsignal calls them with Buffers several times per message (the chain steps, the MAC, the AES-CBC
 * body), on both ends: the same operations on the same bytes, the key imported with `createSecretKey`.
 */
const assertBuffers = (...values: unknown[]): void => {
  for (const value of values) if (!(value instanceof Buffer)) throw new TypeError(`Expected Buffer instead of: ${typeof value}`);
};
if (!signalCrypto.__keyObjects) {
  signalCrypto.__keyObjects = true;
  signalCrypto.encrypt = (key, data, iv) => {
    assertBuffers(key, data, iv);
    const cipher = createCipheriv('aes-256-cbc', createSecretKey(key), iv);
    return Buffer.concat([cipher.update(data), cipher.final()]);
  };
  signalCrypto.decrypt = (key, data, iv) => {
    assertBuffers(key, data, iv);
    const decipher = createDecipheriv('aes-256-cbc', createSecretKey(key), iv);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  };
  signalCrypto.calculateMAC = (key, data) => {
    assertBuffers(key, data);
    return createHmac('sha256', createSecretKey(key)).update(data).digest();
  };
  // libsignal's own verifyMAC calls its module-local calculateMAC, so it is replaced too, with its messages.
  signalCrypto.verifyMAC = (data, key, mac, length) => {
    const calculated = signalCrypto.calculateMAC(key, data).subarray(0, length);
    if (mac.length !== length || calculated.length !== length) throw new Error('Bad MAC length');
    if (!timingSafeEqual(mac, calculated)) throw new Error('Bad MAC');
  };
}

/**
 * libsignal signs and checks signatures with curve25519-js, a pure-JavaScript XEdDSA: 7-9 ms per
 * signature or check on Node 24, and a link makes several (the server's certificate chain, the pairing's
 * device signatures, the signed pre-key); and it makes each key pair through Node's DER-encoded key
 * generation (86 µs), 812 of them for a link's pre-keys. whatsapp-rust-bridge, which Baileys already
 * loads, has the same operations in WebAssembly (Signal's Rust implementation): about 0.1 ms per
 * signature or check and 42 µs per key pair, the same formats, and the same answers
 * (test/unit/libsignal-curve.test.ts). libsignal's own checks of the arguments stay, with their errors.
 * Baileys reads libsignal's curve at each call (its patch), so it calls these whichever loaded first.
 */
interface SignalCurve {
  generateKeyPair: () => { pubKey: Buffer; privKey: Buffer };
  calculateSignature: (privKey: Buffer, message: Buffer) => Buffer;
  verifySignature: (pubKey: Buffer, message: Buffer, signature: Buffer, isInit?: boolean) => boolean;
  __wasm?: true;
}
const curve = require('libsignal/src/curve.js') as SignalCurve;
if (!curve.__wasm) {
  curve.__wasm = true;
  const verify = curve.verifySignature;
  curve.generateKeyPair = () => {
    const { pubKey, privKey } = generateCurveKeyPair();
    return { pubKey: Buffer.from(pubKey), privKey: Buffer.from(privKey) };
  };
  curve.calculateSignature = (privKey, message) => {
    if (privKey === undefined) throw new Error('Undefined private key');
    if (!(privKey instanceof Buffer)) throw new Error(`Invalid private key type: ${(privKey as object).constructor.name}`);
    if (privKey.byteLength !== 32) throw new Error(`Incorrect private key length: ${privKey.byteLength}`);
    if (!message) throw new Error('Invalid message');
    return Buffer.from(signXeddsa(privKey, message));
  };
  curve.verifySignature = (pubKey, message, signature, isInit) => {
    // libsignal's checks (and its warning for a key without the type byte); with isInit it verifies nothing.
    verify(pubKey, message, signature, true);
    return isInit ? true : verifyXeddsa(pubKey.byteLength === 33 ? pubKey.subarray(1) : pubKey, message, signature);
  };
}
