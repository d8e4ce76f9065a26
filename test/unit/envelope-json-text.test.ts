/**
 * Pre-encoded JSON in answers (lib/http/envelope.ts `JsonText`, used by the
 * results page, docs/results.md): the envelope writes the stored text as it
 * is, never parsed and encoded again, and the answer is the JSON of the
 * decoded values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeJson, JsonText, success } from '../../lib/http/envelope';

describe('JsonText in an answer', () => {
  it('is written as its text, byte for byte (spacing kept: not re-encoded), and the answer decodes to the values', () => {
    const items = [new JsonText('{ "seq" : 1 , "name":"Ünïcode \\u00e9" }'), new JsonText('[1,  2]'), new JsonText('null')];
    const body = success({ accounts: items, lastSeq: 3 }).body!;
    expect(body).toBe('{"data":{"accounts":[{ "seq" : 1 , "name":"Ünïcode \\u00e9" },[1,  2],null],"lastSeq":3},"error":null}');
    expect(JSON.parse(body)).toEqual({ data: { accounts: [{ seq: 1, name: 'Ünïcode é' }, [1, 2], null], lastSeq: 3 }, error: null });
  });

  it('equals JSON.stringify of the decoded values for any data around it, whatever its strings hold', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 5 }),
        fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }),
        (values, strings) => {
          const data = {
            strings,
            texts: values.map((value) => new JsonText(JSON.stringify(value))),
            tail: strings.join('\u0000jsontext:'),
          };
          const decoded = { strings, texts: values.map((value) => JSON.parse(JSON.stringify(value)) as unknown), tail: data.tail };
          expect(encodeJson(data)).toBe(JSON.stringify(decoded));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('decodes itself under any other JSON.stringify (never written as a string by mistake)', () => {
    expect(JSON.stringify({ item: new JsonText('{"a":[1,2]}') })).toBe('{"item":{"a":[1,2]}}');
    expect(encodeJson({ a: 1 })).toBe('{"a":1}');
  });
});
