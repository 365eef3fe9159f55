import { addTransactionCapability, Curve, DEFAULT_CONNECTION_CONFIG, generateSignalPubKey, initAuthCreds } from 'baileys';
import type { AuthenticationCreds, SignalDataSet, SignalDataTypeMap, SignalKeyStore, SocketConfig } from 'baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { routeLibsignalConsole } from '../../src/runtime/libsignal-console.ts';
import { signalRepositoryFor } from '../../src/runtime/network/baileys-signal.ts';

const logger = pino({ level: 'silent' });
// libsignal's own console lines (sessions closed in favour of new ones), as the service routes them.
routeLibsignalConsole(logger);
const A = '100000000001:1@lid';
const B = '100000000001:2@lid';

/** A key store in memory, as the auth store is to Baileys: get and set by type and id. */
const memoryKeys = (): SignalKeyStore => {
  const data = new Map<string, unknown>();
  return {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = data.get(`${type}/${id}`);
        if (value !== undefined) found[id] = value as SignalDataTypeMap[T];
      }
      return found;
    },
    set: async (writes: SignalDataSet) => {
      for (const [type, entries] of Object.entries(writes)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
      }
    },
  };
};

/** One linked device: its credentials, its key store with Baileys' transactions, and its Signal repository. */
const device = (jid: string, make: (creds: AuthenticationCreds) => SocketConfig['makeSignalRepository']) => {
  const creds: AuthenticationCreds = { ...initAuthCreds(), me: { id: jid.replace('@lid', '@s.whatsapp.net'), lid: jid } };
  const keys = addTransactionCapability(memoryKeys(), logger, { maxCommitRetries: 1, delayBetweenTriesMs: 0 });
  const repository = make(creds)({ creds, keys }, logger);
  /** A key bundle as the network hands it out, with a one-time prekey used up by whoever takes it. */
  const bundle = async (preKeyId: number) => {
    const preKey = Curve.generateKeyPair();
    await keys.set({ 'pre-key': { [String(preKeyId)]: preKey } });
    return {
      registrationId: creds.registrationId,
      // Buffers, as Baileys reads them from the network's answer.
      identityKey: Buffer.from(generateSignalPubKey(creds.signedIdentityKey.public)),
      signedPreKey: {
        keyId: creds.signedPreKey.keyId,
        publicKey: Buffer.from(generateSignalPubKey(creds.signedPreKey.keyPair.public)),
        signature: Buffer.from(creds.signedPreKey.signature),
      },
      preKey: { keyId: preKeyId, publicKey: Buffer.from(generateSignalPubKey(preKey.public)) },
    };
  };
  return { creds, keys, repository, bundle };
};

const text = (s: string) => Buffer.from(s);
const plain = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/**
 * Two devices start a session with each other at the same moment: A has sent B two messages (pkmsg)
 * from B's bundle, and B is sending to A, a send that (as Baileys' relayMessage does) sets up its
 * session from A's bundle and encrypts inside one transaction keyed by B's own JID. A's first message
 * is decrypted while that send is still open; then the send ends, and B reads A's second message.
 */
const simultaneousStart = async (make: (creds: AuthenticationCreds) => SocketConfig['makeSignalRepository']) => {
  const a = device(A, make);
  const b = device(B, make);
  await a.repository.injectE2ESession({ jid: B, session: await b.bundle(1) });
  const first = await a.repository.encryptMessage({ jid: B, data: text('first') });
  const second = await a.repository.encryptMessage({ jid: B, data: text('second') });
  expect([first.type, second.type]).toEqual(['pkmsg', 'pkmsg']);

  let encrypted: () => void = () => undefined;
  const encryptedOnce = new Promise<void>((resolve) => {
    encrypted = resolve;
  });
  let endSend: () => void = () => undefined;
  const sendOpen = new Promise<void>((resolve) => {
    endSend = resolve;
  });
  const sending = b.keys.transaction(async () => {
    await b.repository.injectE2ESession({ jid: A, session: await a.bundle(1) });
    const sent = await b.repository.encryptMessage({ jid: A, data: text('from b') });
    encrypted();
    await sendOpen;
    return sent;
  }, b.creds.me?.id ?? '');
  await encryptedOnce;
  const decrypting = b.repository.decryptMessage({ jid: A, type: 'pkmsg', ciphertext: first.ciphertext });
  // Time for an in-memory decrypt to finish, unless it waits for the send.
  await Promise.race([decrypting.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 200))]);
  endSend();
  const [sent, firstPlain] = await Promise.all([sending, decrypting]);
  return {
    first: plain(firstPlain),
    second: await b.repository.decryptMessage({ jid: A, type: 'pkmsg', ciphertext: second.ciphertext }).then(plain),
    atA: plain(await a.repository.decryptMessage({ jid: B, type: sent.type, ciphertext: sent.ciphertext })),
  };
};

describe("a received message decrypted while the link's send is open", () => {
  it('waits for the send, so the session it sets up is kept: every later message of it decrypts, both ways', async () => {
    expect(await simultaneousStart(signalRepositoryFor)).toEqual({ first: 'first', second: 'second', atA: 'from b' });
  });

  it("is lost with Baileys rc14's own repository: the send writes back the record it read (drop baileys-signal.ts when this fails)", async () => {
    await expect(simultaneousStart(() => DEFAULT_CONNECTION_CONFIG.makeSignalRepository)).rejects.toThrow('Invalid PreKey ID');
  });
});
