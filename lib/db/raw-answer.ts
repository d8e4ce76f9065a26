/**
 * A BatchGetItem answer's body read straight from its bytes (lib/db/raw-read.ts `batchGetRawScanned`): no text of the
 * whole body, no object per attribute value, no base64 string per binary attribute. The history's evaluation read
 * takes ~1,000 small items per 1,000-account launch or quote, and `JSON.parse` of their ~450 KB (at 100 k accounts)
 * allocated the body's text, four objects and three strings an item, the base64 text among them, before the Buffers
 * were decoded: about a quarter of the read's allocation (bench/README.md "The history CPU figures", session 54).
 *
 * The scanner walks the JSON (RFC 8259) of DynamoDB's answer: the items of `Responses[tableName]`, each attribute
 * `{ "<type>": value }` reduced as lib/db/raw-read.ts's `RawItem` (S a string, N a number, B a Buffer decoded from the
 * bytes, L and M by `unmarshall`; other types skipped), every other top-level field (`UnprocessedKeys`,
 * `ConsumedCapacity`) parsed by `JSON.parse` of its own bytes.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** One attribute value of an item as read: a string, a number, a Buffer, or a list or map as `unmarshall` gives it. */
export type ScannedValue = string | number | Buffer | unknown[] | Record<string, unknown>;

/** What {@link scanBatchGetAnswer} reads: the table's items and the answer's other top-level fields, parsed. */
export interface ScannedAnswer {
  items: Record<string, ScannedValue | undefined>[];
  rest: Record<string, unknown>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Base64 alphabet (RFC 4648, both the standard and the URL-safe one) → 6-bit value; −1 elsewhere. */
const BASE64 = (() => {
  const table = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) table[alphabet.charCodeAt(i)] = i;
  table[0x2d] = 62;
  table[0x5f] = 63;
  return table;
})();

/** A malformed answer (the SDK's own error is not raised for a 200; this names where the scan stopped). */
const malformed = (at: number): Error => new SyntaxError(`Malformed BatchGetItem answer at byte ${at}`);

function skipSpace(body: Uint8Array, at: number): number {
  let i = at;
  for (let c = body[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = body[++i]);
  return i;
}

/** `body[at]` must be `byte`. @returns the index after it (and after the white space that follows). */
function expect(body: Uint8Array, at: number, byte: number): number {
  const i = skipSpace(body, at);
  if (body[i] !== byte) throw malformed(i);
  return skipSpace(body, i + 1);
}

/** The end (index after the closing quote) of the string whose opening quote is at `at` (quotes found natively). */
function endOfString(body: Buffer, at: number): number {
  if (body[at] !== QUOTE) throw malformed(at);
  for (let from = at + 1; ;) {
    const quote = body.indexOf(QUOTE, from);
    if (quote === -1) throw malformed(at);
    // Closing unless escaped: an odd number of backslashes before it.
    let before = quote - 1;
    while (before > at && body[before] === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The end of the JSON value starting at `at` (no white space before it). */
function endOfValue(body: Buffer, at: number): number {
  const first = body[at];
  if (first === QUOTE) return endOfString(body, at);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let i = at; i < body.length; i++) {
      const c = body[i];
      if (c === QUOTE) i = endOfString(body, i) - 1;
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
      else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return i + 1;
    }
    throw malformed(at);
  }
  let i = at;
  for (
    let c = body[i];
    i < body.length && c !== COMMA && c !== CLOSE_OBJECT && c !== CLOSE_ARRAY && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09;
    c = body[++i]
  );
  if (i === at) throw malformed(at);
  return i;
}

/** Whether `body[start..end)` holds a backslash (a JSON string's escape). */
function escaped(body: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (body[i] === BACKSLASH) return true;
  return false;
}

/** The string whose quotes are at `start` and `end` − 1 (escapes, when it has any, read by `JSON.parse`). */
function stringOf(body: Buffer, start: number, end: number): string {
  if (!escaped(body, start, end)) return body.toString('utf8', start + 1, end - 1);
  return JSON.parse(body.toString('utf8', start, end)) as string;
}

/**
 * The bytes of the base64 string whose quotes are at `start` and `end` − 1, decoded from the body itself, 4 characters
 * to 3 bytes (an escaped string, which DynamoDB does not send, is read by `JSON.parse` first).
 */
function bytesOf(body: Buffer, start: number, end: number): Buffer {
  const from = start + 1;
  let to = end - 1;
  while (to > from && body[to - 1] === 0x3d) to--;
  const out = Buffer.allocUnsafe(Math.floor(((to - from) * 6) / 8));
  let i = from;
  let o = 0;
  for (const whole = from + ((to - from) & ~3); i < whole; i += 4) {
    const quad = (BASE64[body[i]!]! << 18) | (BASE64[body[i + 1]!]! << 12) | (BASE64[body[i + 2]!]! << 6) | BASE64[body[i + 3]!]!;
    // Any character outside the alphabet (−1) makes the quad negative.
    if (quad < 0) return Buffer.from(JSON.parse(body.toString('utf8', start, end)) as string, 'base64');
    out[o++] = quad >>> 16;
    out[o++] = (quad >>> 8) & 0xff;
    out[o++] = quad & 0xff;
  }
  let held = 0;
  let bits = 0;
  for (; i < to; i++) {
    const sextet = BASE64[body[i]!]!;
    if (sextet < 0) return Buffer.from(JSON.parse(body.toString('utf8', start, end)) as string, 'base64');
    held = (held << 6) | sextet;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (held >>> bits) & 0xff;
    }
  }
  return out;
}

/** One item (`{ "<name>": { "<type>": value }, … }`) at `at`. @returns the item and the index after it. */
function itemAt(body: Buffer, at: number): [Record<string, ScannedValue | undefined>, number] {
  const item: Record<string, ScannedValue | undefined> = {};
  let i = expect(body, at, OPEN_OBJECT);
  if (body[i] === CLOSE_OBJECT) return [item, i + 1];
  for (;;) {
    const nameEnd = endOfString(body, i);
    const name = stringOf(body, i, nameEnd);
    const valueStart = expect(body, nameEnd, COLON);
    i = expect(body, valueStart, OPEN_OBJECT);
    const typeEnd = endOfString(body, i);
    const type = body.toString('latin1', i + 1, typeEnd - 1);
    const start = expect(body, typeEnd, COLON);
    const end = endOfValue(body, start);
    i = expect(body, end, CLOSE_OBJECT);
    if (type === 'S') item[name] = stringOf(body, start, end);
    else if (type === 'N') item[name] = Number(stringOf(body, start, end));
    else if (type === 'B') item[name] = bytesOf(body, start, end);
    else if (type === 'L' || type === 'M') {
      const value = JSON.parse(body.toString('utf8', valueStart, i)) as AttributeValue;
      item[name] = unmarshall({ value } as Record<string, AttributeValue>).value as unknown[] | Record<string, unknown>;
    }
    if (body[i] === CLOSE_OBJECT) return [item, i + 1];
    i = expect(body, i, COMMA);
  }
}

/**
 * Reads a BatchGetItem answer's body (JSON): the items of `tableName` in `Responses` and every other top-level field.
 * @throws SyntaxError when the body is not the JSON of an object.
 */
export function scanBatchGetAnswer(body: Buffer, tableName: string): ScannedAnswer {
  const answer: ScannedAnswer = { items: [], rest: {} };
  let i = expect(body, 0, OPEN_OBJECT);
  if (body[i] === CLOSE_OBJECT) return answer;
  for (;;) {
    const keyEnd = endOfString(body, i);
    const key = stringOf(body, i, keyEnd);
    const start = expect(body, keyEnd, COLON);
    const end = endOfValue(body, start);
    if (key !== 'Responses') answer.rest[key] = JSON.parse(body.toString('utf8', start, end));
    else {
      // { "<table>": [ item, … ], … }: this table's items read, any other table's skipped.
      let t = expect(body, start, OPEN_OBJECT);
      while (body[t] !== CLOSE_OBJECT) {
        const tableEnd = endOfString(body, t);
        const table = stringOf(body, t, tableEnd);
        const listStart = expect(body, tableEnd, COLON);
        if (table !== tableName) t = skipSpace(body, endOfValue(body, listStart));
        else {
          t = expect(body, listStart, OPEN_ARRAY);
          while (body[t] !== CLOSE_ARRAY) {
            const [item, after] = itemAt(body, t);
            answer.items.push(item);
            t = skipSpace(body, after);
            if (body[t] === COMMA) t = skipSpace(body, t + 1);
            else if (body[t] !== CLOSE_ARRAY) throw malformed(t);
          }
          t = skipSpace(body, t + 1);
        }
        if (body[t] === COMMA) t = skipSpace(body, t + 1);
        else if (body[t] !== CLOSE_OBJECT) throw malformed(t);
      }
    }
    i = skipSpace(body, end);
    if (body[i] === CLOSE_OBJECT) return answer;
    i = expect(body, i, COMMA);
  }
}
