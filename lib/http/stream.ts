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
import { Readable } from 'node:stream';
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
  const json = object.json ?? JSON.stringify(object.data);
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

  /** The body as a Node stream of UTF-8 text; destroying it (the reader went away) aborts the objects' signal. */
  body(): Readable {
    const controller = new AbortController();
    const framing = this.framing;
    const objects = this.objects(controller.signal);
    const readable = Readable.from(chunks(objects, framing), { objectMode: false, highWaterMark: STREAM_CHUNK_BYTES });
    readable.once('close', () => controller.abort());
    return readable;
  }
}

/**
 * The streaming answer of a use case's {@link StreamedAnswer} (a 200 whose body is the objects' text), `undefined`
 * for any other data: the `streamedAnswer` option of the pipeline (lib/http/pipeline.ts) for streaming operations.
 */
export function streamedAnswerOf(data: unknown): StreamingResult | undefined {
  return data instanceof StreamedAnswer ? { statusCode: 200, headers: data.headers(), body: data.body() } : undefined;
}

/**
 * The framed objects as chunks of UTF-8 bytes: the objects marked `more` are
 * written into one buffer, sent as one chunk of up to
 * {@link STREAM_CHUNK_BYTES} (one allocation per chunk, not a string and a
 * Buffer per object: the stream's memory stays flat, bench `results`); any
 * other object is sent at once with what was held.
 */
async function* chunks(objects: AsyncIterable<StreamObject>, framing: StreamFraming): AsyncGenerator<Buffer> {
  const held = Buffer.allocUnsafeSlow(STREAM_CHUNK_BYTES);
  let length = 0;
  const take = () => {
    const chunk = Buffer.allocUnsafeSlow(length);
    held.copy(chunk, 0, 0, length);
    length = 0;
    return chunk;
  };
  for await (const object of objects) {
    const text = frame(object, framing);
    const bytes = Buffer.byteLength(text);
    if (length > 0 && length + bytes > STREAM_CHUNK_BYTES) yield take();
    if (bytes > STREAM_CHUNK_BYTES) yield Buffer.from(text);
    else length += held.write(text, length);
    if (!object.more && length > 0) yield take();
  }
  if (length > 0) yield take();
}
