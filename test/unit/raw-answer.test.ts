/**
 * lib/db/raw-answer.ts `scanBatchGetAnswer` (the history's evaluation read, lib/db/raw-read.ts `batchGetRawScanned`)
 * against `JSON.parse` and the SDK's own `unmarshall` of the same answer: over fast-check generated BatchGetItem
 * answers (strings with escapes and non-ASCII text, numbers, binary values of every length, lists and maps, other
 * tables, unprocessed keys, consumed capacity, and white space between tokens), the same items and the same other
 * fields; a truncated answer throws.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanBatchGetAnswer } from '../../lib/db/raw-answer';

const attribute = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }).map((S) => ({ S })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => ({ N: String(n) })),
  fc.uint8Array({ maxLength: 700 }).map((bytes) => ({ B: Buffer.from(bytes).toString('base64') })),
  fc
    .array(
      fc.string({ maxLength: 5 }).map((S) => ({ S })),
      { maxLength: 3 },
    )
    .map((L) => ({ L })),
  fc
    .dictionary(
      fc.string({ minLength: 1, maxLength: 4 }),
      fc.integer().map((n) => ({ N: String(n) })),
      { maxKeys: 3 },
    )
    .map((M) => ({ M })),
  fc.boolean().map((BOOL) => ({ BOOL })),
);
const item = fc.dictionary(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), attribute, { maxKeys: 5 });

/** What lib/db/raw-read.ts's JSON path gives for an item: S, N and B reduced, L and M unmarshalled, other types left out. */
function expected(wire: Record<string, Record<string, unknown>>) {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(wire)) {
    if ('S' in value) out[name] = value.S;
    else if ('N' in value) out[name] = Number(value.N);
    else if ('B' in value) out[name] = Buffer.from(value.B as string, 'base64');
    else if ('L' in value || 'M' in value) out[name] = unmarshall({ value } as never).value;
  }
  return out;
}

describe('BatchGetItem answer scan', () => {
  it('reads the same items and other fields as JSON.parse, whatever the spacing and escapes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 8 }),
        fc.array(item, { maxLength: 3 }),
        fc.boolean(),
        fc.boolean(),
        (items, other, spaced, withRest) => {
          const answer = {
            Responses: { other: other, 'the-table': items },
            ...(withRest
              ? {
                  UnprocessedKeys: { 'the-table': { Keys: [{ pk: { S: 'a\u00e9"' } }] } },
                  ConsumedCapacity: [{ TableName: 'the-table', CapacityUnits: 2.5 }],
                }
              : {}),
          };
          const text = spaced ? JSON.stringify(answer, null, 2) : JSON.stringify(answer);
          const scanned = scanBatchGetAnswer(Buffer.from(text), 'the-table');
          expect(scanned.items).toEqual(items.map(expected));
          const { Responses: _, ...rest } = answer;
          expect(scanned.rest).toEqual(rest);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads escaped base64 (\\/) and throws on a truncated answer', () => {
    const bytes = Buffer.from([0xfb, 0xff, 0x01]);
    const text = JSON.stringify({ Responses: { t: [{ b: { B: bytes.toString('base64') } }] } }).replace('/', '\\/');
    expect(scanBatchGetAnswer(Buffer.from(text), 't').items).toEqual([{ b: bytes }]);
    expect(() => scanBatchGetAnswer(Buffer.from(text.slice(0, -3)), 't')).toThrow(SyntaxError);
  });
});
