/**
 * Identifier digests (lib/warehouse/identifiers.ts; docs/privacy.md "Identifiers and what is stored"): the 32 bytes a
 * result part stores and the hex the service keeps are SHA-256 of `type:normalized` as Node's `createHash` computes it,
 * for any text (non-Latin characters, emoji, empty), although the digest is taken as a latin1 string into a pooled
 * Buffer; digests made one after another never share or overwrite each other's bytes.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contactDigests, DIGEST_BYTES, IDENTIFIER_TYPES, identifierDigest, identifierHash } from '../../lib/warehouse/identifiers';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

describe('identifier digests', () => {
  it('are SHA-256 of type:normalized, as bytes and as hex, for any text', () => {
    fc.assert(
      fc.property(fc.constantFrom(...IDENTIFIER_TYPES), fc.string({ unit: 'grapheme', maxLength: 80 }), (type, value) => {
        const expected = sha256(`${type}:${value}`);
        const digest = identifierDigest(type, value);
        expect(digest.length).toBe(DIGEST_BYTES);
        expect(digest.equals(expected)).toBe(true);
        expect(identifierHash(type, value)).toBe(expected.toString('hex'));
      }),
      { numRuns: 500 },
    );
  });

  it('keep their own bytes: 1,000 digests made in a row each still equal their hash', () => {
    const values = Array.from({ length: 1_000 }, (_, i) => `person${i}@example.com`);
    const digests = values.map((value) => identifierDigest('email', value));
    digests.forEach((digest, i) => expect(digest.equals(sha256(`email:${values[i]}`))).toBe(true));
    const contact = {
      contactId: 'c1',
      email: 'Ann@Example.com ',
      mobilePhone: '+1 (415) 555-0100',
      directPhone: 'none',
      linkedinUrl: null,
    };
    expect(Buffer.concat(contactDigests(contact))).toEqual(
      Buffer.concat([sha256('contact_id:c1'), sha256('email:ann@example.com'), sha256('phone:+14155550100')]),
    );
  });
});
