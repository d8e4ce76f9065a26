/**
 * The signed receipt of a completed erasure (docs/privacy.md "Verifying a
 * receipt"): a compact JWS (RFC 7515, ES256) over {@link ReceiptPayload},
 * verifiable with the public keys served at `GET /.well-known/jwks.json`
 * (RFC 7517). Signing is a port: locally an ES256 key kept in a file of the
 * data folder ({@link createFileReceiptSigner}); in AWS a KMS asymmetric key
 * that never leaves KMS (docs/deploy.md).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { HashedIdentifier } from './identifiers';
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
