/**
 * List cursors (spec "List campaigns" 4-5; decisions §3): opaque and
 * tamper-evident. A cursor is `base64url(payload).base64url(HMAC-SHA256)`;
 * its payload binds it to the organization, the filters and the page size
 * that produced it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidRequestError } from '../errors';

/** What a cursor carries. */
export interface CursorPayload {
  /** Organization the page belongs to. */
  o: string;
  /** Canonical form of the filters. */
  f: string;
  /** Page size. */
  l: number;
  /** `listSk` of the last item of the page: the next page starts below it. */
  a: string;
}

const sign = (body: string, secret: string) => createHmac('sha256', secret).update(body).digest('base64url');

/** Encodes and signs a cursor. */
export function encodeCursor(payload: CursorPayload, secret: string): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${sign(body, secret)}`;
}

const invalid = (why: string) => new InvalidRequestError('The cursor is invalid.', [`cursor: ${why}`]);

/**
 * Verifies a cursor and returns the position it encodes.
 * @throws InvalidRequestError when altered, of another organization, or sent with other filters or limit.
 */
export function decodeCursor(cursor: string, secret: string, expected: Omit<CursorPayload, 'a'>): string {
  const [body, signature, extra] = cursor.split('.');
  if (!body || !signature || extra !== undefined) throw invalid('malformed');
  const expectedSignature = Buffer.from(sign(body, secret));
  const given = Buffer.from(signature);
  if (given.length !== expectedSignature.length || !timingSafeEqual(given, expectedSignature)) throw invalid('altered or not issued by this API');
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw invalid('malformed');
  }
  if (typeof payload !== 'object' || payload === null) throw invalid('malformed');
  if (payload.o !== expected.o) throw invalid('issued for another organization');
  if (payload.f !== expected.f) throw invalid('issued for other filters; send the same filters as the page that returned it');
  if (payload.l !== expected.l) throw invalid('issued for another limit; send the same limit as the page that returned it');
  if (typeof payload.a !== 'string') throw invalid('malformed');
  return payload.a;
}
