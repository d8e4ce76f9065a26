/**
 * Streamed answers (docs/results.md "The stream"): a success that is a
 * sequence of JSON objects written as they come, in one of two framings the
 * `Accept` header chooses: JSON Lines (the default, `application/jsonl`;
 * `application/x-ndjson` too) or Server-Sent Events (`text/event-stream`).
 *
 * A use case answers a {@link StreamedAnswer}; the pipeline (./pipeline.ts)
 * turns it into a response whose body is a Node stream, which the local
 * server pipes to the socket and the Lambda response stream carries in AWS
 * (lib/lambda/streaming.ts). Whatever can be refused is refused before: the
 * use case opens what it reads before it answers the stream.
 */
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidRequestError } from '../errors';
import type { StreamingResult } from './pipeline';

/** The framings of a stream, by the media type the answer carries. */
export const STREAM_MEDIA_TYPES = {
  jsonl: 'application/jsonl',
  ndjson: 'application/x-ndjson',
  sse: 'text/event-stream',
} as const;

/** A stream's framing. */
export type StreamFraming = keyof typeof STREAM_MEDIA_TYPES;

/** One object of a stream: its JSON, and for Server-Sent Events its `event` name and `id` (a keep-alive is a comment). */
export interface StreamObject {
  /** The object written (a JSON line; the `data:` of an SSE event). */
  data: { readonly type: string };
  /** `data` already encoded as JSON: written as it is instead of encoding `data` (its `type` still names the SSE event). */
  json?: string;
  /**
   * `data` already encoded as JSON in UTF-8 bytes (the results stream's accounts, copied from the stored parts):
   * written as they are, like {@link json}. A view the producer may reuse: the body copies it before it asks for
   * the next object.
   */
  jsonBytes?: Uint8Array;
  /** SSE `id:` (the position a reconnect resumes after with `Last-Event-ID`). */
  id?: number;
  /** A keep-alive: an SSE comment line instead of an event. */
  keepAlive?: boolean;
  /**
   * Another object follows at once (an account of a batch being read): the body may hold this one back to send
   * with the next ones, in one chunk of up to {@link STREAM_CHUNK_BYTES}. Absent: sent now (nothing is held while
   * the stream waits).
   */
  more?: boolean;
}

/** Bytes a stream's body gathers into one chunk while objects follow at once (its `highWaterMark` too). */
export const STREAM_CHUNK_BYTES = 64 * 1024;

/**
 * Chunk buffers a stream written by {@link StreamedAnswer.writeTo} holds at most: the one being filled and those
 * handed to the response but not yet written out. Each is reused once the response has written it, so a stream of
 * any length holds these few buffers (bench `results`: the stream's peak memory flat).
 */
export const STREAM_CHUNKS_HELD = 4;

/**
 * The framing the `Accept` header asks for: Server-Sent Events when it
 * names `text/event-stream` (with a non-zero quality) above the JSON Lines
 * types, `application/x-ndjson` when it names that and not
 * `application/jsonl`, JSON Lines otherwise (no header, `*\/*`, or any other
 * type: JSON Lines is the default).
 */
export function framingOf(accept: string | undefined): StreamFraming {
  const ranges = (accept ?? '')
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = params.find((param) => param.startsWith('q='));
      return { type, q: q === undefined ? 1 : Number(q.slice(2)) || 0 };
    })
    .filter((range) => range.q > 0);
  const quality = (type: string) => Math.max(0, ...ranges.filter((range) => range.type === type).map((range) => range.q));
  const sse = quality(STREAM_MEDIA_TYPES.sse);
  const jsonl = quality(STREAM_MEDIA_TYPES.jsonl);
  const ndjson = quality(STREAM_MEDIA_TYPES.ndjson);
  if (sse > 0 && sse > Math.max(jsonl, ndjson)) return 'sse';
  if (ndjson > 0 && ndjson > jsonl) return 'ndjson';
  return 'jsonl';
}

/**
 * The `Last-Event-ID` header of an SSE reconnect as a position: the last
 * `id:` the reader received. `undefined` when absent.
 * @throws InvalidRequestError (400) when it is not an integer ≥ 0.
 */
export function lastEventIdOf(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const value = header.trim();
  if (!/^\d{1,15}$/.test(value)) {
    throw new InvalidRequestError('The Last-Event-ID header must be the id of an event received (an integer ≥ 0).', [
      'last-event-id: expected an integer ≥ 0',
    ]);
  }
  return Number(value);
}

/** One object in a framing: a JSON line, or an SSE event (`id:`, `event:` the object's `type`, `data:`) or comment. */
export function frame(object: StreamObject, framing: StreamFraming): string {
  if (framing === 'sse' && object.keepAlive) return `: ${object.data.type}\n\n`;
  const json = object.json ?? (object.jsonBytes ? Buffer.from(object.jsonBytes).toString('utf8') : JSON.stringify(object.data));
  if (framing !== 'sse') return `${json}\n`;
  return `${object.id !== undefined ? `id: ${object.id}\n` : ''}event: ${object.data.type}\ndata: ${json}\n\n`;
}

/**
 * A use case's streamed success: the objects to write, produced on demand.
 * `objects` receives a signal that aborts when the reader goes away, so a
 * wait inside ends at once.
 */
export class StreamedAnswer {
  constructor(
    readonly framing: StreamFraming,
    readonly objects: (signal: AbortSignal) => AsyncIterable<StreamObject>,
    /** Headers of the answer besides the framing's (names in lower case). */
    readonly extraHeaders: Record<string, string> = {},
  ) {}

  /** The response headers: the framing's media type, no caching, no proxy buffering. */
  headers(): Record<string, string> {
    return {
      'content-type': `${STREAM_MEDIA_TYPES[this.framing]}; charset=utf-8`,
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      ...this.extraHeaders,
    };
  }

  /**
   * The body as a Node stream of UTF-8 text; destroying it (the reader went away) aborts the objects' signal.
   * Each chunk is a fresh Buffer (a reader may keep it); {@link writeTo} reuses its chunks instead.
   */
  body(): Readable {
    const controller = new AbortController();
    let held: Buffer | undefined; // made when the body is first read (not when written by writeTo instead)
    // Copied out of the one buffer filled in turn: the reader may keep what it was given.
    const copies = async function* (chunks: AsyncIterable<Chunk>) {
      for await (const { bytes } of chunks) yield copyOf(bytes);
    };
    const readable = Readable.from(
      copies(framedChunks(this.objects(controller.signal), this.framing, () => (held ??= Buffer.allocUnsafeSlow(STREAM_CHUNK_BYTES)))),
      {
        objectMode: false,
        highWaterMark: STREAM_CHUNK_BYTES,
      },
    );
    readable.once('close', () => controller.abort());
    return readable;
  }

  /**
   * Writes the body into `out` (the Lambda response stream, the local server's response) and ends it: the same
   * bytes and chunks as {@link body}, in at most {@link STREAM_CHUNKS_HELD} buffers, each reused once `out` has
   * written it (its write callback), so the stream's memory does not grow with its length; while all are
   * held, the objects wait (backpressure). `out` closing early (the reader went away) aborts the objects' signal.
   * @throws the error of `out`, or `Error` when it closed before the end; then `out` is destroyed.
   */
  async writeTo(out: Writable): Promise<void> {
    const controller = new AbortController();
    const free: Buffer[] = [];
    let made = 0;
    let failure: Error | undefined;
    let wake: (() => void) | undefined;
    const woken = () => {
      const resume = wake;
      wake = undefined;
      resume?.();
    };
    const onError = (error: Error) => {
      failure ??= error;
      controller.abort();
      woken();
    };
    const onClose = () => onError(new Error('The stream’s reader went away before its end'));
    out.on('error', onError).once('close', onClose);
    const nextBuffer = async (): Promise<Buffer> => {
      while (free.length === 0 && made >= STREAM_CHUNKS_HELD && failure === undefined)
        await new Promise<void>((resolve) => (wake = resolve));
      if (failure) throw failure;
      const buffer = free.pop();
      if (buffer) return buffer;
      made++;
      return Buffer.allocUnsafeSlow(STREAM_CHUNK_BYTES);
    };
    try {
      for await (const { bytes, buffer } of framedChunks(this.objects(controller.signal), this.framing, nextBuffer)) {
        if (failure) throw failure;
        out.write(bytes, (error) => {
          if (error) failure ??= error;
          else if (buffer) free.push(buffer);
          woken();
        });
      }
      if (failure) throw failure;
      out.off('close', onClose);
      await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    } catch (error) {
      controller.abort();
      out.destroy(error as Error);
      throw error;
    } finally {
      out.off('error', onError).off('close', onClose);
    }
  }
}

/** A copy of `bytes` in a Buffer of its own, outside Node's shared pool (it outlives the chunk it came from). */
function copyOf(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * The streaming answer of a use case's {@link StreamedAnswer} (a 200 whose body is the objects' text), `undefined`
 * for any other data: the `streamedAnswer` option of the pipeline (lib/http/pipeline.ts) for streaming operations.
 */
export function streamedAnswerOf(data: unknown): StreamingResult | undefined {
  return data instanceof StreamedAnswer
    ? { statusCode: 200, headers: data.headers(), body: data.body(), writeTo: (out) => data.writeTo(out) }
    : undefined;
}

/**
 * Writes a streaming answer's body into `out` and ends it (the Lambda response stream, lib/http/stream-lambda.ts;
 * the local server's response): through its `writeTo`, in reused chunks, when it has one; piped otherwise.
 * @throws when `out` fails or closes before the end (the reader went away); the body is then destroyed.
 */
export async function writeStreamingBody(result: StreamingResult, out: Writable): Promise<void> {
  if (result.writeTo) return result.writeTo(out);
  return pipeline(result.body, out);
}

/** A chunk of a stream's body: `bytes`, a view of `buffer` when that is a chunk buffer to reuse once written. */
interface Chunk {
  bytes: Buffer;
  buffer?: Buffer;
}

/**
 * The framed objects as chunks of UTF-8 bytes: the objects marked `more` are
 * written into one chunk buffer, sent as one chunk of up to
 * {@link STREAM_CHUNK_BYTES}; any other object is sent at once with what was
 * held. Each chunk fills a buffer `nextBuffer` gives (of
 * {@link STREAM_CHUNK_BYTES}), which the consumer uses before it asks for
 * the next chunk ({@link StreamedAnswer.body} copies it) or hands back once
 * written ({@link StreamedAnswer.writeTo}). An account is copied from its
 * stored bytes (`jsonBytes`) into the chunk: no string or Buffer per object.
 * An object longer than a chunk goes alone in a Buffer of its own.
 */
async function* framedChunks(
  objects: AsyncIterable<StreamObject>,
  framing: StreamFraming,
  nextBuffer: () => Buffer | Promise<Buffer>,
): AsyncGenerator<Chunk> {
  let held: Buffer | undefined;
  let length = 0;
  const take = (): Chunk => {
    const chunk = { bytes: held!.subarray(0, length), buffer: held! };
    held = undefined;
    length = 0;
    return chunk;
  };
  for await (const object of objects) {
    // The object in three pieces: its framing's head, its JSON (bytes as stored, or a text), its framing's tail.
    const bytes = object.jsonBytes;
    const head = bytes === undefined ? frame(object, framing) : framing === 'sse' ? sseHead(object) : '';
    const tail = bytes === undefined ? '' : framing === 'sse' ? '\n\n' : '\n';
    const size = Buffer.byteLength(head) + (bytes?.length ?? 0) + tail.length;
    if (length > 0 && length + size > STREAM_CHUNK_BYTES) yield take();
    if (size > STREAM_CHUNK_BYTES) {
      const alone = Buffer.allocUnsafeSlow(size);
      let at = alone.write(head, 0);
      if (bytes) {
        alone.set(bytes, at);
        at += bytes.length;
      }
      alone.write(tail, at);
      yield { bytes: alone };
    } else {
      held ??= await nextBuffer();
      if (head.length > 0) length += held.write(head, length);
      if (bytes) {
        held.set(bytes, length);
        length += bytes.length;
      }
      if (tail.length > 0) length += held.write(tail, length);
    }
    if (!object.more && length > 0) yield take();
  }
  if (length > 0) yield take();
}

/** The SSE lines before an event's JSON: `id:` (when it has one), `event:`, and `data: ` ({@link frame}'s). */
const sseHead = (object: StreamObject): string =>
  `${object.id !== undefined ? `id: ${object.id}\n` : ''}event: ${object.data.type}\ndata: `;
