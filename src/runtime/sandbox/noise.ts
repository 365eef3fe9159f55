import { createCipheriv, createDecipheriv, createSecretKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { aesDecryptGCM, aesEncryptGCM, Curve, hkdf, NOISE_MODE, proto, sha256 } from 'baileys';
import type { KeyPair } from 'baileys';

const IV_LENGTH = 12;
const HEADER_LENGTH = 4;

const ivFor = (counter: number): Buffer => {
  const iv = Buffer.alloc(IV_LENGTH);
  iv.writeUInt32BE(counter, 8);
  return iv;
};

export interface ClientHello {
  ephemeral: Uint8Array;
}

const TAG_BYTES = 16;

// The transport keys last the connection: as key objects, each frame's cipher does not import its key
// again (about 10 µs per frame on Node 24), which the sandbox's phones would otherwise add to every
// benchmark that shares their process.
const sealFrame = (plaintext: Buffer, key: KeyObject, iv: Uint8Array): Buffer<ArrayBuffer> => {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
};

const openFrame = (sealed: Buffer, key: KeyObject, iv: Uint8Array): Buffer<ArrayBuffer> => {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
};

/** The responder side of Baileys' Noise XX handshake, then the framed transport. */
export class NoiseServer {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private transport?: { enc: KeyObject; dec: KeyObject; writeCounter: number; readCounter: number };
  private ephemeral: KeyPair = Curve.generateKeyPair();
  private inBytes: Buffer = Buffer.alloc(0);
  private headerSeen = false;
  /** the client's static (noise) public key, known once the handshake finishes */
  clientStatic?: Uint8Array;

  constructor(
    private readonly serverStatic: KeyPair,
    private readonly chain: Uint8Array,
  ) {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode;
    this.salt = mode;
    this.key = mode;
  }

  get ready(): boolean {
    return this.transport !== undefined;
  }

  private authenticate(data: Uint8Array): void {
    if (!this.transport) this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  private mix(data: Uint8Array): void {
    const out = hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' });
    this.salt = Buffer.from(out.subarray(0, 32));
    this.key = Buffer.from(out.subarray(32));
    this.counter = 0;
  }

  private encryptHandshake(plaintext: Uint8Array): Buffer {
    const out = aesEncryptGCM(plaintext, this.key, ivFor(this.counter++), this.hash);
    this.authenticate(out);
    return out;
  }

  private decryptHandshake(ciphertext: Uint8Array): Buffer {
    const out = aesDecryptGCM(ciphertext, this.key, ivFor(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return out;
  }

  /** Splits raw socket bytes into frames (the first one carries the 4-byte WA header). */
  feed(data: Uint8Array): Buffer[] {
    this.inBytes = Buffer.concat([this.inBytes, data]);
    if (!this.headerSeen) {
      if (this.inBytes.length < HEADER_LENGTH) return [];
      const header = this.inBytes.subarray(0, HEADER_LENGTH);
      if (header[0] === 0x45 && header[1] === 0x44) throw new Error('routing-info intro headers are not modelled');
      this.authenticate(header);
      this.inBytes = this.inBytes.subarray(HEADER_LENGTH);
      this.headerSeen = true;
    }
    const frames: Buffer[] = [];
    while (this.inBytes.length >= 3) {
      const size = this.inBytes.readUIntBE(0, 3);
      if (this.inBytes.length < size + 3) break;
      let frame = Buffer.from(this.inBytes.subarray(3, size + 3));
      this.inBytes = this.inBytes.subarray(size + 3);
      if (this.transport) {
        const t = this.transport;
        frame = openFrame(frame, t.dec, ivFor(t.readCounter++));
      }
      frames.push(frame);
    }
    return frames;
  }

  /** Answers the client hello with our ephemeral, our certified static key and the chain. */
  serverHello(hello: ClientHello): Buffer {
    this.authenticate(hello.ephemeral);
    this.authenticate(this.ephemeral.public);
    this.mix(Curve.sharedKey(this.ephemeral.private, hello.ephemeral));
    const staticEnc = this.encryptHandshake(this.serverStatic.public);
    this.mix(Curve.sharedKey(this.serverStatic.private, hello.ephemeral));
    const payload = this.encryptHandshake(this.chain);
    return Buffer.from(
      proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload } }).finish(),
    );
  }

  /** Reads the client finish: its static key and its ClientPayload; switches to transport keys. */
  clientFinish(message: proto.IHandshakeMessage): proto.ClientPayload {
    const finish = message.clientFinish;
    if (!finish?.static || !finish.payload) throw new Error('client finish without static key or payload');
    this.clientStatic = this.decryptHandshake(finish.static);
    this.mix(Curve.sharedKey(this.ephemeral.private, this.clientStatic));
    const payload = proto.ClientPayload.decode(this.decryptHandshake(finish.payload));
    const out = hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' });
    // The client writes with the first half and reads with the second.
    this.transport = { dec: createSecretKey(out.subarray(0, 32)), enc: createSecretKey(out.subarray(32)), writeCounter: 0, readCounter: 0 };
    return payload;
  }

  /** A frame to send: 3-byte length, then the body (encrypted once in transport). */
  frame(body: Uint8Array): Buffer {
    let data = Buffer.from(body);
    if (this.transport) {
      const t = this.transport;
      data = sealFrame(data, t.enc, ivFor(t.writeCounter++));
    }
    const out = Buffer.alloc(3 + data.length);
    out.writeUIntBE(data.length, 0, 3);
    data.copy(out, 3);
    return out;
  }
}
