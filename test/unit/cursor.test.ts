/**
 * Unit tests of list cursors (docs/pagination.md):
 * a cursor round-trips its position, and is refused when altered in any
 * single character, sent by another organization, with other filters or
 * another limit, malformed, or signed with another secret.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, type CursorPayload } from '../../lib/http/cursor';
import { InvalidRequestError } from '../../lib/errors';

const SECRET = 'unit-test-cursor-secret';
const PAYLOAD: CursorPayload = {
  o: 'org_1111111111111111111111',
  f: '[["enriched"],null]',
  l: 20,
  a: '2025-06-01T10:00:00.000Z#camp_2222222222222222222222',
};
const binding = ({ o, f, l }: CursorPayload) => ({ o, f, l });

/** The `details.issues` of the InvalidRequestError `fn` throws (fails when it returns). */
function refusal(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).statusCode).toBe(400);
    expect((error as InvalidRequestError).code).toBe('invalid_request');
    return (error as InvalidRequestError).details?.issues as string[];
  }
  throw new Error('expected the cursor to be refused');
}

const payloads = fc.record({
  o: fc.string({ minLength: 1, maxLength: 30 }),
  f: fc.string({ maxLength: 60 }),
  l: fc.integer({ min: 1, max: 1000 }),
  a: fc.string({ maxLength: 80 }),
});
const secrets = fc.string({ minLength: 1, maxLength: 40 });
/** Characters an attacker would try: the base64url alphabet, the separator, and a few others. */
const replacement = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ %é');

describe('encodeCursor / decodeCursor', () => {
  it('round-trips the position for any payload and secret', () => {
    fc.assert(
      fc.property(payloads, secrets, (payload, secret) => {
        expect(decodeCursor(encodeCursor(payload, secret), secret, binding(payload))).toBe(payload.a);
      }),
      { numRuns: 300 },
    );
  });

  it('is URL-safe: two base64url parts without padding, joined by one dot', () => {
    fc.assert(
      fc.property(payloads, secrets, (payload, secret) => {
        expect(encodeCursor(payload, secret)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      }),
    );
  });

  it('is deterministic for the same payload and secret', () => {
    expect(encodeCursor(PAYLOAD, SECRET)).toBe(encodeCursor({ ...PAYLOAD }, SECRET));
  });

  it('refuses any single-character alteration', () => {
    fc.assert(
      fc.property(payloads, secrets, fc.nat(), replacement, (payload, secret, at, char) => {
        const cursor = encodeCursor(payload, secret);
        const index = at % cursor.length;
        fc.pre(cursor[index] !== char);
        const altered = cursor.slice(0, index) + char + cursor.slice(index + 1);
        const issues = refusal(() => decodeCursor(altered, secret, binding(payload)));
        expect(issues).toHaveLength(1);
        expect(issues[0]).toMatch(/^cursor: (malformed|altered or not issued by this API)$/);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a cursor with a character removed or added', () => {
    const cursor = encodeCursor(PAYLOAD, SECRET);
    fc.assert(
      fc.property(fc.nat(), replacement, fc.boolean(), (at, char, remove) => {
        const index = at % cursor.length;
        const altered = remove ? cursor.slice(0, index) + cursor.slice(index + 1) : cursor.slice(0, index) + char + cursor.slice(index);
        refusal(() => decodeCursor(altered, SECRET, binding(PAYLOAD)));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a cursor signed with another secret', () => {
    fc.assert(
      fc.property(payloads, secrets, secrets, (payload, secret, other) => {
        fc.pre(secret !== other);
        expect(refusal(() => decodeCursor(encodeCursor(payload, other), secret, binding(payload)))).toEqual([
          'cursor: altered or not issued by this API',
        ]);
      }),
    );
  });

  it('refuses a cursor issued for another organization, other filters or another limit', () => {
    const cursor = encodeCursor(PAYLOAD, SECRET);
    expect(refusal(() => decodeCursor(cursor, SECRET, { ...binding(PAYLOAD), o: 'org_3333333333333333333333' }))).toEqual([
      'cursor: issued for another organization',
    ]);
    expect(refusal(() => decodeCursor(cursor, SECRET, { ...binding(PAYLOAD), f: '[null,null]' }))).toEqual([
      'cursor: issued for other filters; send the same filters as the page that returned it',
    ]);
    expect(refusal(() => decodeCursor(cursor, SECRET, { ...binding(PAYLOAD), l: 21 }))).toEqual([
      'cursor: issued for another limit; send the same limit as the page that returned it',
    ]);
  });

  it('refuses any other binding than the one it was issued for', () => {
    fc.assert(
      fc.property(payloads, payloads, (issued, sent) => {
        fc.pre(issued.o !== sent.o || issued.f !== sent.f || issued.l !== sent.l);
        refusal(() => decodeCursor(encodeCursor(issued, SECRET), SECRET, binding(sent)));
      }),
    );
  });

  it.each([
    ['empty', ''],
    ['a dot alone', '.'],
    ['no signature', 'eyJvIjoiYSJ9'],
    ['an empty signature', 'eyJvIjoiYSJ9.'],
    ['an empty body', '.abc'],
    ['three parts', 'a.b.c'],
    ['a trailing dot', `${encodeCursor(PAYLOAD, SECRET)}.`],
    ['a third part', `${encodeCursor(PAYLOAD, SECRET)}.x`],
  ])('refuses a malformed cursor: %s', (_label, cursor) => {
    expect(refusal(() => decodeCursor(cursor, SECRET, binding(PAYLOAD)))).toEqual(['cursor: malformed']);
  });

  it('refuses a truncated or padded signature', () => {
    const cursor = encodeCursor(PAYLOAD, SECRET);
    for (const altered of [cursor.slice(0, -1), `${cursor}A`, `${cursor}=`, `${cursor.split('.')[0]}.${'A'.repeat(43)}`]) {
      expect(refusal(() => decodeCursor(altered, SECRET, binding(PAYLOAD)))).toEqual(['cursor: altered or not issued by this API']);
    }
  });

  it('refuses a correctly signed body that is not a cursor payload', () => {
    const signed = (body: string) => {
      const encoded = Buffer.from(body).toString('base64url');
      return `${encoded}.${createHmac('sha256', SECRET).update(encoded).digest('base64url')}`;
    };
    expect(refusal(() => decodeCursor(signed('not json'), SECRET, binding(PAYLOAD)))).toEqual(['cursor: malformed']);
    expect(refusal(() => decodeCursor(signed(JSON.stringify({ ...PAYLOAD, a: 7 })), SECRET, binding(PAYLOAD)))).toEqual([
      'cursor: malformed',
    ]);
    expect(
      refusal(() => decodeCursor(signed(JSON.stringify({ o: PAYLOAD.o, f: PAYLOAD.f, l: PAYLOAD.l })), SECRET, binding(PAYLOAD))),
    ).toEqual(['cursor: malformed']);
    // Our own format: the signature covers the base64url text, so the test's signer matches encodeCursor.
    expect(signed(JSON.stringify(PAYLOAD))).toBe(encodeCursor(PAYLOAD, SECRET));
  });
});
