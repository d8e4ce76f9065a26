/**
 * A streaming operation's handler as Lambda's Node.js runtime runs it
 * (lib/http/stream-lambda.ts): with the runtime's response streaming
 * (`awslambda`, here the same interface recorded), a success's body is
 * written into the response stream after the status and headers, in at most
 * STREAM_CHUNKS_HELD chunk buffers however long it is, byte for byte as the
 * body would give it; a refusal is written as its envelope.
 */
import { once } from 'node:events';
import { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_CHUNKS_HELD, StreamedAnswer, streamedAnswerOf, type StreamObject } from '../../lib/http/stream';
import { streamifiedHandler } from '../../lib/http/stream-lambda';
import type { StreamingApiHandler } from '../../lib/http/pipeline';

const STREAMING = Symbol('streaming handler');

/** The runtime's `awslambda` as a streaming function finds it in AWS: the handler is called with a response stream. */
function installRuntime(): { preludes: { statusCode: number; headers?: Record<string, string> }[] } {
  const preludes: { statusCode: number; headers?: Record<string, string> }[] = [];
  (globalThis as { awslambda?: unknown }).awslambda = {
    streamifyResponse: (handler: (event: unknown, stream: Writable, context: Context) => Promise<void>) =>
      Object.assign((event: unknown, stream: Writable, context: Context) => handler(event, stream, context), { [STREAMING]: true }),
    HttpResponseStream: {
      from(stream: Writable, prelude: { statusCode: number; headers?: Record<string, string> }) {
        preludes.push(prelude);
        return stream;
      },
    },
  };
  return { preludes };
}

/** A response stream recording each chunk's bytes when it writes it (on the next tick) and the buffers it was given. */
function responseStream() {
  const written: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  const out = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      buffers.add(chunk.buffer);
      setImmediate(() => {
        written.push(Buffer.from(chunk));
        callback();
      });
    },
  });
  return { out, written, buffers };
}

/** `count` accounts as views of one buffer the producer overwrites, then `end`; and the JSON Lines they make. */
function accounts(count: number): { objects: () => AsyncGenerator<StreamObject>; text: string } {
  const json = (i: number) => JSON.stringify({ type: 'account', seq: i + 1, name: `Company ${i}`.padEnd(700, '.') });
  return {
    text: `${Array.from({ length: count }, (_, i) => `${json(i)}\n`).join('')}{"type":"end","lastSeq":${count},"complete":true}\n`,
    async *objects() {
      const item = Buffer.alloc(1024);
      for (let i = 0; i < count; i++) {
        const length = item.write(json(i));
        yield { data: { type: 'account' }, jsonBytes: item.subarray(0, length), id: i + 1, more: i + 1 < count };
      }
      yield { data: { type: 'end', lastSeq: count, complete: true } };
    },
  };
}

const event = {} as APIGatewayProxyEventV2;
const context = {} as Context;
type StreamingInvoke = (event: unknown, stream: Writable, context: Context) => Promise<void>;

afterEach(() => {
  delete (globalThis as { awslambda?: unknown }).awslambda;
});

describe('streamifiedHandler under the Lambda runtime', () => {
  it(`writes a success's body into the response stream in at most ${STREAM_CHUNKS_HELD} buffers, for 500 accounts and for 5,000`, async () => {
    const { preludes } = installRuntime();
    const used: number[] = [];
    for (const count of [500, 5_000]) {
      const { objects, text } = accounts(count);
      const handler = streamifiedHandler(async () => streamedAnswerOf(new StreamedAnswer('jsonl', objects))!) as unknown as StreamingInvoke;
      expect((handler as unknown as Record<symbol, boolean>)[STREAMING]).toBe(true);
      const response = responseStream();
      await handler(event, response.out, context);
      expect(response.out.writableFinished).toBe(true);
      expect(Buffer.concat(response.written).toString('utf8')).toBe(text);
      expect(response.written.length).toBeGreaterThan(count / 100);
      used.push(response.buffers.size);
    }
    expect(preludes.map((prelude) => prelude.statusCode)).toEqual([200, 200]);
    expect(preludes[0]!.headers!['content-type']).toBe('application/jsonl; charset=utf-8');
    expect(used[0]).toBeLessThanOrEqual(STREAM_CHUNKS_HELD);
    expect(used[1]).toBe(used[0]);
  });

  it('writes a refusal as its envelope after its status', async () => {
    const { preludes } = installRuntime();
    const body = JSON.stringify({ data: null, error: { code: 'invalid_request', message: 'Bad.' } });
    const refuse: StreamingApiHandler = async () => ({ statusCode: 400, headers: { 'content-type': 'application/json' }, body });
    const response = responseStream();
    await (streamifiedHandler(refuse) as unknown as StreamingInvoke)(event, response.out, context);
    // Ended by the handler; the runtime answers once the stream finishes.
    if (!response.out.writableFinished) await once(response.out, 'finish');
    expect(preludes).toEqual([{ statusCode: 400, headers: { 'content-type': 'application/json' } }]);
    expect(Buffer.concat(response.written).toString('utf8')).toBe(body);
  });
});
