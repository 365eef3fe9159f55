import { randomBytes } from 'node:crypto';
import { aesDecryptCTR, aesDecryptGCM, aesEncryptCTR, Curve, derivePairingCodeKey, getBinaryNodeChild, hkdf } from 'baileys';
import type { BinaryNode, KeyPair } from 'baileys';
import type { VirtualPhone } from './directory.ts';
import type { Connection } from './server.ts';
import { newTag } from './server.ts';

/** A companion that asked to be linked to a number by code, waiting for that phone to enter it. */
export interface CodeRequest {
  conn: Connection;
  number: string;
  wrappedCompanionEphemeral: Buffer;
  ref: Buffer;
  /** set once the phone entered the code */
  phoneEphemeral?: KeyPair;
  companionEphemeral?: Buffer;
  finish?: (advSecret: Buffer) => void;
}

const bufferChild = (node: BinaryNode | undefined, tag: string): Buffer | undefined => {
  const content = getBinaryNodeChild(node, tag)?.content;
  return content instanceof Uint8Array ? Buffer.from(content) : undefined;
};

/** companion_hello: remember the request; the answer carries the ref the phone will echo. */
export const companionHello = (conn: Connection, reg: BinaryNode): CodeRequest => {
  const wrapped = bufferChild(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub');
  if (!wrapped) throw new Error('companion_hello without a wrapped ephemeral key');
  return {
    conn,
    number: (reg.attrs.jid ?? '').split('@')[0]?.split(':')[0] ?? '',
    wrappedCompanionEphemeral: wrapped,
    ref: randomBytes(16),
  };
};

/** The phone enters the code: it unwraps the companion's key and sends its own, wrapped with the same code. */
export const primaryHello = async (request: CodeRequest, phone: VirtualPhone, code: string): Promise<BinaryNode> => {
  const w = request.wrappedCompanionEphemeral;
  const key = await derivePairingCodeKey(code, w.subarray(0, 32));
  request.companionEphemeral = aesDecryptCTR(w.subarray(48, 80), key, w.subarray(32, 48));
  request.phoneEphemeral = Curve.generateKeyPair();
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const wrapped = Buffer.concat([salt, iv, aesEncryptCTR(request.phoneEphemeral.public, await derivePairingCodeKey(code, salt), iv)]);
  return {
    tag: 'notification',
    attrs: { from: 's.whatsapp.net', type: 'link_code_companion_reg', id: newTag(), t: String(Math.floor(Date.now() / 1000)) },
    content: [
      {
        tag: 'link_code_companion_reg',
        attrs: { stage: 'primary_hello' },
        content: [
          { tag: 'link_code_pairing_ref', attrs: {}, content: request.ref },
          { tag: 'primary_identity_pub', attrs: {}, content: phone.identity.public },
          { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrapped },
        ],
      },
    ],
  };
};

/** companion_finish: open the key bundle and derive the same adv secret the companion derived. */
export const advSecretFromFinish = (request: CodeRequest, phone: VirtualPhone, reg: BinaryNode): Buffer => {
  if (!request.phoneEphemeral || !request.companionEphemeral) throw new Error('companion_finish before the phone entered the code');
  const bundle = bufferChild(reg, 'link_code_pairing_wrapped_key_bundle');
  if (!bundle) throw new Error('companion_finish without a key bundle');
  const companionShared = Curve.sharedKey(request.phoneEphemeral.private, request.companionEphemeral);
  const key = hkdf(companionShared, 32, { salt: bundle.subarray(0, 32), info: 'link_code_pairing_key_bundle_encryption_key' });
  const payload = aesDecryptGCM(bundle.subarray(44), Buffer.from(key), bundle.subarray(32, 44), Buffer.alloc(0));
  const companionIdentity = payload.subarray(0, 32);
  const random = payload.subarray(64, 96);
  const identityShared = Curve.sharedKey(phone.identity.private, companionIdentity);
  return Buffer.from(hkdf(Buffer.concat([companionShared, identityShared, random]), 32, { info: 'adv_secret' }));
};
