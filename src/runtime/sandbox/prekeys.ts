import { getBinaryNodeChild, getBinaryNodeChildren } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { LinkedDevice } from './directory.ts';

const bytes = (node: BinaryNode | undefined): Uint8Array | undefined => (node?.content instanceof Uint8Array ? node.content : undefined);

const bigEndian = (value: Uint8Array | undefined): number => (value ? [...value].reduce((n, b) => n * 256 + b, 0) : 0);

/** encrypt/set: the companion uploads one-time prekeys and its signed prekey. */
export const storeUploadedKeys = (device: LinkedDevice, iq: BinaryNode): number => {
  for (const key of getBinaryNodeChildren(getBinaryNodeChild(iq, 'list'), 'key')) {
    const id = bigEndian(bytes(getBinaryNodeChild(key, 'id')));
    const value = bytes(getBinaryNodeChild(key, 'value'));
    if (value) device.preKeys.set(id, value);
  }
  const skey = getBinaryNodeChild(iq, 'skey');
  const skeyValue = bytes(getBinaryNodeChild(skey, 'value'));
  const skeySignature = bytes(getBinaryNodeChild(skey, 'signature'));
  if (skey && skeyValue && skeySignature) {
    device.signedPreKey = { keyId: bigEndian(bytes(getBinaryNodeChild(skey, 'id'))), publicKey: skeyValue, signature: skeySignature };
  }
  const identity = bytes(getBinaryNodeChild(iq, 'identity'));
  if (identity) device.identityPublic = identity;
  const registration = bytes(getBinaryNodeChild(iq, 'registration'));
  if (registration) device.registrationId = bigEndian(registration);
  return device.preKeys.size;
};

const encodeBigEndian = (value: number, length: number): Buffer => {
  const out = Buffer.alloc(length);
  out.writeUIntBE(value, 0, length);
  return out;
};

/** A key bundle as `encrypt/get <key>` answers it; the one-time prekey is used up. */
export const bundleNode = (
  jid: string,
  identity: {
    registrationId: number;
    identityPublic: Uint8Array;
    signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  },
  preKey?: { id: number; publicKey: Uint8Array },
): BinaryNode => ({
  tag: 'user',
  attrs: { jid },
  content: [
    { tag: 'registration', attrs: {}, content: encodeBigEndian(identity.registrationId, 4) },
    { tag: 'type', attrs: {}, content: Buffer.from([5]) },
    { tag: 'identity', attrs: {}, content: identity.identityPublic },
    {
      tag: 'skey',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: encodeBigEndian(identity.signedPreKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: identity.signedPreKey.publicKey },
        { tag: 'signature', attrs: {}, content: identity.signedPreKey.signature },
      ],
    },
    ...(preKey
      ? [
          {
            tag: 'key',
            attrs: {},
            content: [
              { tag: 'id', attrs: {}, content: encodeBigEndian(preKey.id, 3) },
              { tag: 'value', attrs: {}, content: preKey.publicKey },
            ],
          },
        ]
      : []),
  ],
});

export const takePreKey = (device: LinkedDevice): { id: number; publicKey: Uint8Array } | undefined => {
  const first = device.preKeys.entries().next();
  if (first.done) return undefined;
  const [id, publicKey] = first.value;
  device.preKeys.delete(id);
  return { id, publicKey };
};
