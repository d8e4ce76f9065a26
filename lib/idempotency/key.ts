/**
 * The fingerprint of a request (docs/idempotency.md), and the `Idempotency-Key`
 * header as lib/http/idempotency-key.ts reads it.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  parseIdempotencyKey,
} from '../http/idempotency-key';

/**
 * The fingerprint of a request: SHA-256 (hex) of the RFC 8785 canonical JSON
 * of its validated input. The input is what the schema produced, so the same
 * request sent as JSON, urlencoded or multipart (or with keys in another
 * order, or a name with surrounding spaces) has the same fingerprint.
 */
export function fingerprintOf(input: unknown): string {
  return createHash('sha256')
    .update(canonicalize(input) ?? 'null')
    .digest('hex');
}
