/**
 * A streamed answer's body (lib/http/stream.ts `StreamedAnswer`): the
 * objects that another follows at once (`more`, the accounts of a batch
 * already readable) are gathered into chunks of up to STREAM_CHUNK_BYTES, one
 * allocation per chunk instead of a string and a Buffer per object; any other
 * object (the last readable account, a keep-alive, `end`) is sent at once
 * with what was held, so nothing waits in the body while the stream waits.
 * Counted chunks and bytes, in both framings. Written into a response
 * (`writeTo`, as the Lambda response stream and the local server write it),
 * the same bytes in at most STREAM_CHUNKS_HELD chunk buffers, whatever the
 * number of objects, each reused only once the response wrote it.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  frame,
  STREAM_CHUNK_BYTES,
  STREAM_CHUNKS_HELD,
  StreamedAnswer,
  type StreamFraming,
  type StreamObject,
} from '../../lib/http/stream';

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

/**
 * `count` accounts of about 1 KB each as the results stream gives them: their JSON as a view of one buffer that the
 * producer overwrites for the next account (`jsonBytes`), all but the last marked `more`, then `end`. `expected`: the
 * same objects as texts.
 */
function reusedViews(count: number): { objects: () => AsyncGenerator<StreamObject>; expected: StreamObject[] } {
  const json = (i: number) => JSON.stringify({ type: 'account', seq: i + 1, pad: String(i % 10).repeat(900 + (i % 200)) });
  const expected = Array.from({ length: count }, (_, i): StreamObject => ({
    data: { type: 'account' },
    json: json(i),
    id: i + 1,
    more: i + 1 < count,
  }));
  return {
    expected: [...expected, { data: { type: 'end' } }],
    async *objects() {
      const item = Buffer.alloc(4096);
      for (let i = 0; i < count; i++) {
        const length = item.write(json(i));
        yield { data: { type: 'account' }, jsonBytes: item.subarray(0, length), id: i + 1, more: i + 1 < count };
        item.fill(0); // the producer's next account overwrites the view
      }
      yield { data: { type: 'end' } };
    },
  };
}

/**
 * A response that records each chunk's bytes (copied when it writes it, after `delayMs` for a slow reader: a buffer
 * reused before its write was called back would show there), its buffer, and how many writes were not yet called
 * back at most.
 */
function recordingResponse(delayMs = 0) {
  const written: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  let outstanding = 0;
  let mostOutstanding = 0;
  const out = new Writable({
    highWaterMark: STREAM_CHUNK_BYTES,
    write(chunk: Buffer, _encoding, callback) {
      const done = () => {
        written.push(Buffer.from(chunk));
        callback();
      };
      if (delayMs > 0) setTimeout(done, delayMs);
      else done();
    },
  });
  const write = out.write.bind(out) as (chunk: Buffer, callback?: (error?: Error | null) => void) => boolean;
  out.write = ((chunk: Buffer, callback?: (error?: Error | null) => void) => {
    buffers.add(chunk.buffer);
    mostOutstanding = Math.max(mostOutstanding, ++outstanding);
    return write(chunk, (error) => {
      outstanding--;
      callback?.(error);
    });
  }) as typeof out.write;
  return { out, written, buffers, mostOutstanding: () => mostOutstanding };
}

describe('StreamedAnswer writeTo', () => {
  for (const framing of ['jsonl', 'sse'] as StreamFraming[]) {
    it(`${framing}: writes the same bytes and chunks as the body, in at most ${STREAM_CHUNKS_HELD} chunk buffers for 300 accounts and for 3,000`, async () => {
      const buffersUsed: number[] = [];
      for (const count of [300, 3_000]) {
        const { objects, expected } = reusedViews(count);
        const response = recordingResponse();
        await new StreamedAnswer(framing, objects).writeTo(response.out);
        expect(response.out.writableFinished).toBe(true);
        const text = expected.map((object) => frame(object, framing)).join('');
        expect(Buffer.concat(response.written).toString('utf8')).toBe(text);
        // The chunks the body gives for the same objects: the same bytes cut at the same places.
        const bodyChunks = await chunksOf(new StreamedAnswer(framing, reusedViews(count).objects));
        expect(response.written.map((chunk) => chunk.length)).toEqual(bodyChunks.map((chunk) => chunk.length));
        expect(response.written.length).toBeGreaterThan(count / 100);
        buffersUsed.push(response.buffers.size);
      }
      // Ten times the accounts, ten times the chunks, the same buffers.
      expect(buffersUsed[0]).toBeLessThanOrEqual(STREAM_CHUNKS_HELD);
      expect(buffersUsed[1]).toBe(buffersUsed[0]);
    });
  }

  it(`never has more than ${STREAM_CHUNKS_HELD} chunks unwritten when the response is slow, and reuses a buffer only once written`, async () => {
    const { objects, expected } = reusedViews(2_000);
    const response = recordingResponse(2);
    await new StreamedAnswer('jsonl', objects).writeTo(response.out);
    // Every byte intact although each buffer was written again and again (a buffer reused before its write was called back would show).
    expect(Buffer.concat(response.written).toString('utf8')).toBe(expected.map((object) => frame(object, 'jsonl')).join(''));
    expect(response.written.length).toBeGreaterThan(STREAM_CHUNKS_HELD * 4);
    expect(response.mostOutstanding()).toBeLessThanOrEqual(STREAM_CHUNKS_HELD);
    expect(response.buffers.size).toBeLessThanOrEqual(STREAM_CHUNKS_HELD);
  });

  it('aborts the objects and rejects when the response closes before the end (the reader went away)', async () => {
    let aborted = false;
    let produced = 0;
    const answer = new StreamedAnswer('jsonl', async function* (signal) {
      signal.addEventListener('abort', () => (aborted = true));
      for (;;) {
        produced++;
        yield { data: { type: 'keepalive' } };
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (signal.aborted) return;
      }
    });
    const response = recordingResponse();
    const writing = answer.writeTo(response.out);
    while (response.written.length < 3) await new Promise((resolve) => setTimeout(resolve, 1));
    response.out.destroy();
    await expect(writing).rejects.toThrow();
    expect(aborted).toBe(true);
    const stoppedAt = produced;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(produced).toBe(stoppedAt);
  });
});
