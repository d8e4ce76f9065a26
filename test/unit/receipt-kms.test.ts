/**
 * The AWS receipt signer (lib/privacy/receipt.ts createKmsReceiptSigner)
 * against a fake KMS client that holds a P-256 key and answers as KMS does:
 * `Sign` (MessageType DIGEST, ECDSA_SHA_256) with a DER signature,
 * `GetPublicKey` with the DER SubjectPublicKeyInfo. The JWS it makes verifies
 * with jose against the JWKS it serves, so the DER → r||s conversion is
 * checked by an independent verifier; a changed payload fails.
 */
import { generateKeyPairSync } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import { p256 } from '@noble/curves/nist.js';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createKmsReceiptSigner, derToJoseSignature, RECEIPT_TYPE, type KmsSender, type ReceiptPayload } from '../../lib/privacy/receipt';

/** A fake KMS holding one P-256 key per key ID; it records the calls. */
function fakeKms(keyIds: readonly string[]) {
  const keysById = new Map(
    keyIds.map((keyId) => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const d = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
      return [keyId, { d, spki: publicKey.export({ format: 'der', type: 'spki' }) }] as const;
    }),
  );
  const calls: string[] = [];
  const client: KmsSender = {
    send: (async (command: unknown) => {
      if (command instanceof SignCommand) {
        const { KeyId, Message, MessageType, SigningAlgorithm } = command.input;
        calls.push(`Sign ${KeyId}`);
        expect(MessageType).toBe('DIGEST');
        expect(SigningAlgorithm).toBe('ECDSA_SHA_256');
        expect(Message).toHaveLength(32);
        const key = keysById.get(KeyId!)!;
        // KMS answers DER (ASN.1 SEQUENCE of two INTEGERs).
        return { Signature: p256.sign(Message!, key.d, { prehash: false, format: 'der' }) };
      }
      if (command instanceof GetPublicKeyCommand) {
        calls.push(`GetPublicKey ${command.input.KeyId}`);
        return { PublicKey: new Uint8Array(keysById.get(command.input.KeyId!)!.spki) };
      }
      throw new Error('unexpected command');
    }) as KmsSender['send'],
  };
  return { client, calls };
}

const payload = (campaigns: number): ReceiptPayload => ({
  erasureId: 'era_1111111111111111111111',
  organizationId: 'org_test',
  requestRef: 'DSR-1',
  regime: 'gdpr',
  identifiers: [{ type: 'email', hash: 'a'.repeat(64) }],
  result: {
    contactsRemoved: 3,
    resultObjectsRewritten: 2,
    exportsDeleted: 1,
    campaignIds: Array.from({ length: campaigns }, (_, i) => `cmp_${String(i).padStart(21, '0')}`),
  },
  completedAt: '2026-11-27T10:00:00.000Z',
});

describe('KMS receipt signer', () => {
  it('makes an ES256 compact JWS that jose verifies against the served keys, and that fails on a changed payload', async () => {
    const kms = fakeKms(['current', 'retired']);
    const signer = createKmsReceiptSigner({ client: kms.client, keyId: 'current', publishedKeyIds: ['current', 'retired'] });
    // 300 campaigns: a payload past the 4 KB KMS takes as a raw message (it signs the digest).
    const jws = await signer.sign(payload(300));
    const jwks = await signer.publicKeys();
    expect(jwks.keys).toHaveLength(2);
    const header = decodeProtectedHeader(jws);
    expect(header).toEqual({ alg: 'ES256', kid: jwks.keys[0]!.kid, typ: RECEIPT_TYPE });
    const verified = await compactVerify(jws, createLocalJWKSet(jwks));
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(payload(300));

    const [h, p, s] = jws.split('.');
    const changed = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as ReceiptPayload;
    changed.result.contactsRemoved = 0;
    await expect(
      compactVerify(`${h}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${s}`, createLocalJWKSet(jwks)),
    ).rejects.toThrow();
    // Signed by the current key only; each public key read once.
    expect(kms.calls.filter((call) => call.startsWith('Sign'))).toEqual(['Sign current']);
    expect(kms.calls.filter((call) => call.startsWith('GetPublicKey')).sort()).toEqual(['GetPublicKey current', 'GetPublicKey retired']);
  });

  it('converts every DER signature to the 64-byte r||s jose verifies (short r and s included)', async () => {
    const kms = fakeKms(['k']);
    const signer = createKmsReceiptSigner({ client: kms.client, keyId: 'k', publishedKeyIds: ['k'] });
    const keySet = createLocalJWKSet(await signer.publicKeys());
    // Random payloads give signatures whose r or s has a leading 0x00 (33 bytes in DER) or fewer than 32 bytes.
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.string(), async (campaigns, requestRef) => {
        const jws = await signer.sign({ ...payload(campaigns), requestRef });
        await compactVerify(jws, keySet);
      }),
      { numRuns: 150 },
    );
  });

  it('refuses what is not a DER ECDSA signature', () => {
    expect(() => derToJoseSignature(new Uint8Array([0x31, 0x00]))).toThrow('Not a DER ECDSA signature');
    expect(() => derToJoseSignature(new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x02, 0x01]))).toThrow();
    const raw = derToJoseSignature(new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x07]));
    expect(raw).toHaveLength(64);
    expect([raw[31], raw[63]]).toEqual([5, 7]);
  });
});
