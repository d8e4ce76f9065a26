/**
 * A streamed answer's body (lib/http/stream.ts `StreamedAnswer`): the
 * objects that another follows at once (`more`, the accounts of a batch
 * already readable) are gathered into chunks of up to STREAM_CHUNK_BYTES, one
 * allocation per chunk instead of a string and a Buffer per object; any other
 * object (the last readable account, a keep-alive, `end`) is sent at once
 * with what was held, so nothing waits in the body while the stream waits.
 * Counted chunks and bytes, in both framings.
 */
import { describe, expect, it } from 'vitest';
import { frame, STREAM_CHUNK_BYTES, StreamedAnswer, type StreamFraming, type StreamObject } from '../../lib/http/stream';

/** `count` accounts of about 1 KB each, all but the last marked `more`, then `end`. */
function objects(count: number): StreamObject[] {
  const accounts = Array.from({ length: count }, (_, i): StreamObject => {
    const data = { type: 'account', seq: i + 1, pad: 'x'.repeat(1_000) };
    return { data, json: JSON.stringify(data), id: i + 1, more: i + 1 < count };
  });
  return [...accounts, { data: { type: 'end' } }];
}

/** The body's chunks as a pipe reads them (flowing, one 'data' per chunk pushed: the Lambda response stream, a socket). */
function chunksOf(answer: StreamedAnswer): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  const body = answer.body();
  return new Promise((resolve, reject) => {
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.once('end', () => resolve(chunks));
    body.once('error', reject);
  });
}

describe('StreamedAnswer body', () => {
  for (const framing of ['jsonl', 'sse'] as StreamFraming[]) {
    it(`${framing}: gathers objects that others follow into chunks of at most ${STREAM_CHUNK_BYTES} bytes, and sends the rest at once, byte for byte`, async () => {
      const list = objects(300);
      const chunks = await chunksOf(
        new StreamedAnswer(framing, async function* () {
          yield* list;
        }),
      );
      const expected = list.map((object) => frame(object, framing)).join('');
      const total = Buffer.byteLength(expected);
      expect(Buffer.concat(chunks).toString('utf8')).toBe(expected);
      for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(STREAM_CHUNK_BYTES);
      // 300 objects of ~1 KB in ⌈total / chunk⌉ full chunks, plus at most the last account's flush and `end`.
      expect(chunks.length).toBeLessThanOrEqual(Math.ceil(total / STREAM_CHUNK_BYTES) + 2);
      expect(chunks.length).toBeLessThan(list.length / 10);
    });
  }

  it('sends an object that no other follows at once: a reader sees each batch’s last account before the stream waits', async () => {
    let release!: () => void;
    const waiting = new Promise<void>((resolve) => (release = resolve));
    const answer = new StreamedAnswer('jsonl', async function* () {
      yield { data: { type: 'account', seq: 1 }, more: true };
      yield { data: { type: 'account', seq: 2 }, more: false };
      await waiting; // the stream waits for the next batch
      yield { data: { type: 'end' } };
    });
    const body = answer.body();
    const first = (await body[Symbol.asyncIterator]().next()).value as Buffer;
    expect(first.toString('utf8')).toBe('{"type":"account","seq":1}\n{"type":"account","seq":2}\n');
    release();
    const rest: Buffer[] = [];
    for await (const chunk of body) rest.push(chunk as Buffer);
    expect(Buffer.concat(rest).toString('utf8')).toBe('{"type":"end"}\n');
  });
});
