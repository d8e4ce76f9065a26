/**
 * The response envelope of every operation (README.md):
 * `{ data, error }` with exactly one of the two non-null.
 *
 * Data may hold {@link JsonText}: JSON already encoded (the results page's
 * items, stored ready in result parts, docs/results.md), which
 * {@link encodeJson} writes into the answer as it is, never parsed and
 * encoded again.
 */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ErrorBody } from '../errors';

/** A success or failure envelope. */
export type Envelope<T> = { data: T; error: null } | { data: null; error: ErrorBody };

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** The {@link JsonText}s met by the {@link encodeJson} running now (encoding is synchronous: one at a time). */
let splicing: { token: string | undefined; texts: string[] } | undefined;

/**
 * A JSON value already encoded (`T`: what it decodes to). {@link encodeJson}
 * (so every answer's envelope) writes its text as it is; any other
 * `JSON.stringify` of it decodes it first (`toJSON`), so it is never written
 * as a string by mistake.
 */
export class JsonText<T = unknown> {
  /** @param text - one whole JSON value (an object, an array or a primitive), as {@link JSON.stringify} would write it. */
  constructor(readonly text: string) {}

  /** The decoded value; inside {@link encodeJson}, a one-time placeholder it replaces with {@link text}. */
  toJSON(): T | string {
    if (!splicing) return JSON.parse(this.text) as T;
    // 96 random bits: no string of the data can hold the placeholder by chance or on purpose.
    splicing.token ??= `\u0000jsontext:${randomBytes(12).toString('hex')}:`;
    splicing.texts.push(this.text);
    return `${splicing.token}${splicing.texts.length - 1}`;
  }
}

/**
 * `JSON.stringify(value)`, with each {@link JsonText} inside written as its
 * text (no parse, no second encoding). What every answer's body is encoded with.
 */
export function encodeJson(value: unknown): string {
  const outer = splicing;
  const state: { token: string | undefined; texts: string[] } = { token: undefined, texts: [] };
  splicing = state;
  let encoded: string;
  try {
    encoded = JSON.stringify(value);
  } finally {
    splicing = outer;
  }
  if (state.token === undefined) return encoded;
  // Each placeholder is a JSON string: `"` + the token (its NUL written `\u0000`) + the index + `"`.
  const marker = `"${JSON.stringify(state.token).slice(1, -1)}`;
  const pieces = encoded.split(marker);
  let out = pieces[0]!;
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const close = piece.indexOf('"');
    out += state.texts[Number(piece.slice(0, close))]! + piece.slice(close + 1);
  }
  return out;
}

/** A 200 response carrying `data` ({@link JsonText} inside written as it is). */
export function success<T>(data: T): APIGatewayProxyStructuredResultV2 {
  return { statusCode: 200, headers: JSON_HEADERS, body: encodeJson({ data, error: null } satisfies Envelope<T>) };
}

/** A failure response with the error's HTTP status. */
export function failure(statusCode: number, error: ErrorBody): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify({ data: null, error } satisfies Envelope<never>) };
}
