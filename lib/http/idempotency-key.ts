/**
 * The `Idempotency-Key` request header (docs/idempotency.md; IETF httpapi idempotency-key draft): its name and how
 * a value is read. Apart from lib/idempotency/ so that the pipeline can name a request's key in its audit record
 * without bundling the idempotency store into every function.
 */
import { InvalidRequestError } from '../errors';

/** Request header name (lower case, as API Gateway and Node deliver it). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Response header marking a replayed answer. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
/** Longest key accepted, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** 1..255 visible ASCII characters (0x21–0x7E). */
const KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

/**
 * Reads an `Idempotency-Key` header value: one pair of surrounding double
 * quotes is removed (the draft sends the key as a structured-field string),
 * then the key must be 1..255 visible ASCII characters.
 *
 * @param raw - the header value as received, or undefined when absent.
 * @returns the key, or undefined when the header is absent.
 * @throws InvalidRequestError (400 `invalid_request`, `details.issues` naming the header) for any other value.
 */
export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const key = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!KEY_PATTERN.test(key)) {
    throw new InvalidRequestError('The Idempotency-Key header is invalid.', [
      `Idempotency-Key: must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (optionally in double quotes)`,
    ]);
  }
  return key;
}
