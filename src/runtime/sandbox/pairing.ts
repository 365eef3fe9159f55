import { randomBytes, randomInt } from 'node:crypto';
import { Curve, hmacSign, proto, WA_ADV_ACCOUNT_SIG_PREFIX } from 'baileys';
import type { BinaryNode } from 'baileys';
import type { LinkedDevice, VirtualPhone } from './directory.ts';

/** What a companion sent in its registration payload: its keys, before any phone claimed it. */
export interface Registration {
  identityPublic: Uint8Array;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  noisePublic: Uint8Array;
  /** from its DeviceProps: a full history sync, and the days of a recent one */
  requireFullSync: boolean;
  recentDays?: number;
}

const fromBigEndian = (bytes: Uint8Array | null | undefined): number => (bytes ? [...bytes].reduce((n, b) => n * 256 + b, 0) : 0);

export const registrationFrom = (payload: proto.IClientPayload, noisePublic: Uint8Array): Registration => {
  const data = payload.devicePairingData;
  if (!data?.eIdent || !data.eSkeyVal || !data.eSkeySig) throw new Error('registration payload without keys');
  return {
    identityPublic: data.eIdent,
    registrationId: fromBigEndian(data.eRegid),
    signedPreKey: { keyId: fromBigEndian(data.eSkeyId), publicKey: data.eSkeyVal, signature: data.eSkeySig },
    noisePublic,
    ...historyWish(data.deviceProps),
  };
};

/** What history a companion asks for in its registration's DeviceProps (Utils/validate-connection.js generateRegistrationNode). */
const historyWish = (bytes: Uint8Array | null | undefined): { requireFullSync: boolean; recentDays?: number } => {
  if (!bytes?.length) return { requireFullSync: false };
  const props = proto.DeviceProps.decode(bytes);
  const days = props.historySyncConfig?.recentSyncDaysLimit;
  return { requireFullSync: props.requireFullSync === true, ...(days ? { recentDays: days } : {}) };
};

export const newRefs = (count: number): string[] => Array.from({ length: count }, () => randomBytes(16).toString('base64url'));

export const pairDeviceNode = (id: string, refs: string[]): BinaryNode => ({
  tag: 'iq',
  attrs: { from: 's.whatsapp.net', type: 'set', id, xmlns: 'md' },
  content: [{ tag: 'pair-device', attrs: {}, content: refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
});

export interface ScannedQr {
  ref: string;
  noisePublic: Buffer;
  identityPublic: Buffer;
  advSecret: Buffer;
}

/** Baileys' QR string: [https://wa.me/settings/linked_devices#]ref,noiseKeyB64,identityKeyB64,advSecretB64,platform */
export const parseQr = (qr: string): ScannedQr => {
  const [ref, noise, identity, adv] = qr.slice(qr.indexOf('#') + 1).split(',');
  if (!ref || !noise || !identity || !adv) throw new Error('not a WhatsApp Web QR string');
  return {
    ref,
    noisePublic: Buffer.from(noise, 'base64'),
    identityPublic: Buffer.from(identity, 'base64'),
    advSecret: Buffer.from(adv, 'base64'),
  };
};

/** The phone's signed statement that this companion belongs to its account (checked by Baileys). */
export const deviceIdentity = (phone: VirtualPhone, companionIdentity: Uint8Array, advSecret: Uint8Array, keyIndex: number): Uint8Array => {
  const details = proto.ADVDeviceIdentity.encode({
    rawId: randomInt(1, 2 ** 31),
    timestamp: Math.floor(Date.now() / 1000),
    keyIndex,
  }).finish();
  const accountSignature = Curve.sign(phone.identity.private, Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, companionIdentity]));
  const signed = proto.ADVSignedDeviceIdentity.encode({
    details,
    accountSignatureKey: phone.identity.public,
    accountSignature,
  }).finish();
  const hmac = hmacSign(signed, advSecret);
  return proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish();
};

export const pairSuccessNode = (id: string, phone: VirtualPhone, deviceId: number, identity: Uint8Array): BinaryNode => ({
  tag: 'iq',
  attrs: { from: 's.whatsapp.net', type: 'set', id, xmlns: 'md' },
  content: [
    {
      tag: 'pair-success',
      attrs: {},
      content: [
        { tag: 'device-identity', attrs: {}, content: identity },
        {
          tag: 'device',
          attrs: { jid: `${phone.number}:${deviceId}@s.whatsapp.net`, lid: `${phone.lid.split('@')[0]}:${deviceId}@lid` },
        },
        { tag: 'platform', attrs: { name: 'android' } },
      ],
    },
  ],
});

export const newLinkedDevice = (deviceId: number, registration: Registration): LinkedDevice => ({
  deviceId,
  noisePublic: registration.noisePublic,
  identityPublic: registration.identityPublic,
  registrationId: registration.registrationId,
  signedPreKey: registration.signedPreKey,
  preKeys: new Map(),
  loggedOut: false,
  historyDue: {
    requireFullSync: registration.requireFullSync,
    ...(registration.recentDays ? { recentDays: registration.recentDays } : {}),
  },
});
