/**
 * Page cursors (docs/pagination.md, docs/launch.md): opaque and
 * tamper-evident. A cursor is `base64url(payload).base64url(HMAC-SHA256)`;
 * its payload binds it to the organization, the resource paged through (the
 * campaign, for a campaign's accounts), the filters and the page size that
 * produced it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidRequestError } from '../errors';

/** What a cursor carries. */
export interface CursorPayload {
  /** Organization the page belongs to. */
  o: string;
  /** Resource paged through, when the page is one resource's (the campaign of `/v1/campaigns/accounts`); absent for the campaign list. */
  s?: string;
  /** Canonical form of the filters. */
  f: string;
  /** Page size. */
  l: number;
  /** Position after the page: `listSk` of the list page's last item (the next page starts below it), or the next account's position in a campaign's list. */
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
  if (given.length !== expectedSignature.length || !timingSafeEqual(given, expectedSignature))
    throw invalid('altered or not issued by this API');
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw invalid('malformed');
  }
  if (typeof payload !== 'object' || payload === null) throw invalid('malformed');
  if (payload.o !== expected.o) throw invalid('issued for another organization');
  if (payload.s !== expected.s) throw invalid('issued for another campaign; send it with the campaign whose page returned it');
  if (payload.f !== expected.f) throw invalid('issued for other filters; send the same filters as the page that returned it');
  if (payload.l !== expected.l) throw invalid('issued for another limit; send the same limit as the page that returned it');
  if (typeof payload.a !== 'string') throw invalid('malformed');
  return payload.a;
}
