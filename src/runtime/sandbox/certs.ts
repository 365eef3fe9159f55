import { Curve, proto } from 'baileys';
import type { KeyPair } from 'baileys';

/** The sandbox's own chain: root -> intermediate -> leaf (the server's static Noise key). */
export interface SandboxCertificates {
  root: KeyPair;
  /** the server's static Noise key pair, certified by the leaf */
  serverStatic: KeyPair;
  /** the CertChain payload sent in the server hello */
  chain: Uint8Array;
}

const ROOT_SERIAL = 0;

const signedCert = (signer: KeyPair, details: proto.CertChain.NoiseCertificate.IDetails) => {
  const encoded = proto.CertChain.NoiseCertificate.Details.encode(details).finish();
  return { details: encoded, signature: Curve.sign(signer.private, encoded) };
};

export const createCertificates = (): SandboxCertificates => {
  const root = Curve.generateKeyPair();
  const intermediate = Curve.generateKeyPair();
  const serverStatic = Curve.generateKeyPair();
  const now = Math.floor(Date.now() / 1000);
  const validity = { notBefore: now - 3600, notAfter: now + 10 * 365 * 24 * 3600 };
  // Baileys checks the intermediate against WA_CERT_DETAILS.PUBLIC_KEY and requires issuerSerial 0.
  const intermediateCert = signedCert(root, { serial: 1, issuerSerial: ROOT_SERIAL, key: intermediate.public, ...validity });
  const leafCert = signedCert(intermediate, { serial: 2, issuerSerial: 1, key: serverStatic.public, ...validity });
  const chain = proto.CertChain.encode({ intermediate: intermediateCert, leaf: leafCert }).finish();
  return { root, serverStatic, chain };
};
