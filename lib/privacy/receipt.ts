/**
 * The signed receipt of a completed erasure (docs/privacy.md "Verifying a
 * receipt"): a compact JWS (RFC 7515, ES256) over {@link ReceiptPayload},
 * verifiable with the public keys served at `GET /.well-known/jwks.json`
 * (RFC 7517). Signing is a port: locally an ES256 key kept in a file of the
 * data folder ({@link createFileReceiptSigner}); in AWS a KMS asymmetric key
 * (ECC_NIST_P256, SIGN_VERIFY) that never leaves KMS ({@link createKmsReceiptSigner};
 * docs/privacy.md "Receipt keys in AWS").
 */
import { createHash, createPublicKey } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { base64url, CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { HashedIdentifier } from '../warehouse/identifiers';
import type { ErasureRegime, ErasureResult } from './store';

/** What a receipt signs, exactly these members. */
export interface ReceiptPayload {
  erasureId: string;
  organizationId: string;
  requestRef: string;
  regime: ErasureRegime;
  identifiers: HashedIdentifier[];
  result: ErasureResult;
  completedAt: string;
}

/** The algorithm of every receipt: ECDSA P-256 with SHA-256. */
export const RECEIPT_ALGORITHM = 'ES256';
/** The JWS `typ` of a receipt. */
export const RECEIPT_TYPE = 'erasure-receipt+jws';

/** A JSON Web Key Set of public keys (RFC 7517). */
export interface PublicKeySet {
  keys: JWK[];
}

/** Signs receipts and tells the keys they verify with. */
export interface ReceiptSigner {
  /** A compact JWS of the payload (protected header `alg`, `kid`, `typ`). */
  sign(payload: ReceiptPayload): Promise<string>;
  /** The public keys receipts verify with (`GET /.well-known/jwks.json`). */
  publicKeys(): Promise<PublicKeySet>;
}

/** The members of a receipt payload, in the order they are signed. */
export const receiptPayloadOf = (payload: ReceiptPayload): ReceiptPayload => ({
  erasureId: payload.erasureId,
  organizationId: payload.organizationId,
  requestRef: payload.requestRef,
  regime: payload.regime,
  identifiers: payload.identifiers.map(({ type, hash }) => ({ type, hash })),
  result: {
    contactsRemoved: payload.result.contactsRemoved,
    resultObjectsRewritten: payload.result.resultObjectsRewritten,
    exportsDeleted: payload.result.exportsDeleted,
    campaignIds: [...payload.result.campaignIds],
  },
  completedAt: payload.completedAt,
});

/** The public JWK of a key pair's JWK, with `kid` (its RFC 7638 thumbprint), `alg` and `use`. */
async function publicJwk(privateJwk: JWK): Promise<JWK> {
  const { kty, crv, x, y } = privateJwk;
  const base = { kty, crv, x, y } as JWK;
  return { ...base, kid: await calculateJwkThumbprint(base), alg: RECEIPT_ALGORITHM, use: 'sig' };
}

/**
 * The local signer: an ES256 key pair in `file` (a private JWK, mode 0600),
 * made on first use. Two processes making it at once keep the first one written.
 */
export function createFileReceiptSigner(file: string): ReceiptSigner {
  let loaded: Promise<{ privateJwk: JWK; publicJwk: JWK }> | undefined;
  const load = () =>
    (loaded ??= (async () => {
      let privateJwk: JWK;
      try {
        privateJwk = JSON.parse(readFileSync(file, 'utf8')) as JWK;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        const { privateKey } = await generateKeyPair(RECEIPT_ALGORITHM, { extractable: true });
        const made = await exportJWK(privateKey);
        mkdirSync(path.dirname(file), { recursive: true });
        try {
          writeFileSync(file, JSON.stringify(made), { flag: 'wx', mode: 0o600 });
          privateJwk = made;
        } catch (raced) {
          if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
          privateJwk = JSON.parse(readFileSync(file, 'utf8')) as JWK;
        }
      }
      return { privateJwk, publicJwk: await publicJwk(privateJwk) };
    })());
  return {
    async sign(payload) {
      const { privateJwk, publicJwk: key } = await load();
      const signingKey = await importJWK(privateJwk, RECEIPT_ALGORITHM);
      return new CompactSign(new TextEncoder().encode(JSON.stringify(receiptPayloadOf(payload))))
        .setProtectedHeader({ alg: RECEIPT_ALGORITHM, kid: key.kid!, typ: RECEIPT_TYPE })
        .sign(signingKey);
    },
    async publicKeys() {
      return { keys: [(await load()).publicJwk] };
    },
  };
}

/** The part of the KMS client the KMS signer sends through (a test gives a fake). */
export type KmsSender = Pick<KMSClient, 'send'>;

/** Byte length of one coordinate (and of r and s) of a P-256 signature. */
const P256_BYTES = 32;

/**
 * The JOSE form of an ECDSA P-256 signature (RFC 7518, section 3.4: `r || s`, 32
 * bytes each) from the DER `SEQUENCE { INTEGER r, INTEGER s }` that KMS answers.
 * @throws Error when `der` is not such a sequence.
 */
export function derToJoseSignature(der: Uint8Array): Uint8Array {
  const fail = (): never => {
    throw new Error('Not a DER ECDSA signature');
  };
  let at = 0;
  const length = (): number => {
    const first = der[at++] ?? fail();
    if (first < 0x80) return first;
    if (first !== 0x81) fail();
    return der[at++] ?? fail();
  };
  if (der[at++] !== 0x30) fail();
  if (length() !== der.length - at) fail();
  const out = new Uint8Array(2 * P256_BYTES);
  for (const offset of [0, P256_BYTES]) {
    if (der[at++] !== 0x02) fail();
    const size = length();
    let value = der.subarray(at, at + size);
    at += size;
    if (value.length !== size) fail();
    while (value.length > P256_BYTES && value[0] === 0) value = value.subarray(1);
    if (value.length > P256_BYTES) fail();
    out.set(value, offset + P256_BYTES - value.length);
  }
  if (at !== der.length) fail();
  return out;
}

/** The public JWK (with `kid`, `alg`, `use`) of a KMS key's SubjectPublicKeyInfo (DER). */
async function kmsPublicJwk(spki: Uint8Array): Promise<JWK> {
  const jwk = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }).export({ format: 'jwk' });
  return publicJwk(jwk as JWK);
}

/**
 * The AWS signer: receipts are signed by the KMS asymmetric key `keyId`
 * (ECC_NIST_P256, SIGN_VERIFY; `kms:Sign` with `ECDSA_SHA_256` over the
 * SHA-256 digest of the JWS signing input), so the private key never leaves
 * KMS. KMS answers a DER signature, turned into the JWS form
 * ({@link derToJoseSignature}). `kid` is the RFC 7638 thumbprint of the
 * key's public JWK, as locally.
 * @param options.keyId - the signing key (ID, ARN or alias); `kms:Sign` and `kms:GetPublicKey` on it.
 * @param options.publishedKeyIds - every key whose public part `GET /.well-known/jwks.json` serves
 *   (the signing key and the retired ones whose receipts must still verify); `kms:GetPublicKey` on each.
 */
export function createKmsReceiptSigner(options: { client: KmsSender; keyId: string; publishedKeyIds: readonly string[] }): ReceiptSigner {
  const publicKeys = new Map<string, Promise<JWK>>();
  const publicKeyOf = (keyId: string) => {
    let key = publicKeys.get(keyId);
    if (!key) {
      key = options.client.send(new GetPublicKeyCommand({ KeyId: keyId })).then(({ PublicKey }) => {
        if (!PublicKey) throw new Error('KMS answered no public key');
        return kmsPublicJwk(PublicKey);
      });
      key.catch(() => publicKeys.delete(keyId));
      publicKeys.set(keyId, key);
    }
    return key;
  };
  return {
    async sign(payload) {
      const { kid } = await publicKeyOf(options.keyId);
      const header = { alg: RECEIPT_ALGORITHM, kid: kid!, typ: RECEIPT_TYPE };
      const signingInput = `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(receiptPayloadOf(payload)))}`;
      const { Signature } = await options.client.send(
        new SignCommand({
          KeyId: options.keyId,
          Message: createHash('sha256').update(signingInput).digest(),
          MessageType: 'DIGEST',
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      );
      if (!Signature) throw new Error('KMS answered no signature');
      return `${signingInput}.${base64url.encode(derToJoseSignature(Signature))}`;
    },
    async publicKeys() {
      return { keys: await Promise.all(options.publishedKeyIds.map(publicKeyOf)) };
    },
  };
}
