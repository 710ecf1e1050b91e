import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { AppConfig } from '../../core/config';
import { canonicalJson, sha256Hex, type CertificateBody } from '../../core/datasets/manifest';

const bytesOf = (body: object): Buffer => Buffer.from(canonicalJson(body), 'utf8');

/**
 * The Ed25519 key that signs dataset certificates (config `export.signingKey`, PKCS#8 PEM; an
 * environment variable may carry its line breaks as `\n`). Outside local and test environments
 * the configuration refuses the built-in key, so a deployed certificate is never signed by a key
 * that ships in the source.
 */
export interface CertificateSigner {
  keyId: string;
  /** The public key (SPKI PEM), so a verifier outside the platform can check a certificate. */
  publicKeyPem: string;
  /** Signs the canonical JSON (RFC 8785) of a dataset certificate, or of any other body the platform certifies. */
  sign(body: CertificateBody | object): string;
  verify(body: CertificateBody | object, signature: string): boolean;
}

export function createCertificateSigner(config: AppConfig['export']): CertificateSigner {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(config.signingKey.replace(/\\n/g, '\n'));
  } catch (err) {
    throw new Error(`APP_EXPORT__SIGNING_KEY is not a PKCS#8 PEM private key: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new Error(`APP_EXPORT__SIGNING_KEY must be an Ed25519 key, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    keyId: `ed25519:${sha256Hex(der).slice(0, 16)}`,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (body) => sign(null, bytesOf(body), privateKey).toString('base64'),
    verify: (body, signature) => {
      try {
        return verify(null, bytesOf(body), publicKey, Buffer.from(signature, 'base64'));
      } catch {
        return false;
      }
    },
  };
}
