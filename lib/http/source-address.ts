/**
 * The caller's IP address, as the audit log records it (docs/deploy.md, "Edge protection").
 *
 * In AWS the API's published address is a CloudFront distribution (infra/edge.ts): API Gateway then sees
 * CloudFront's address, and the caller's is in `CloudFront-Viewer-Address`. That header is trusted only when the
 * request also carries {@link ORIGIN_VERIFY_HEADER} with the secret the distribution adds (`ORIGIN_VERIFY_SECRET`
 * of the function's environment): a caller reaching API Gateway directly cannot choose the address recorded.
 */
import { timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The header by which CloudFront proves a request passed the edge. */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/** The environment variable holding the value CloudFront sends in {@link ORIGIN_VERIFY_HEADER}. */
export const ORIGIN_VERIFY_SECRET_ENV = 'ORIGIN_VERIFY_SECRET';

/**
 * The IP address of `CloudFront-Viewer-Address` (`198.51.100.7:46532`, `2001:db8::1:46532`): the text before the
 * last colon, or undefined when the header is absent or malformed.
 */
export function viewerAddressOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const colon = header.lastIndexOf(':');
  if (colon <= 0 || !/^\d+$/.test(header.slice(colon + 1))) return undefined;
  const address = header.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return /^[0-9a-fA-F:.]+$/.test(address) ? address : undefined;
}

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * The caller's IP address: `CloudFront-Viewer-Address` when the request proves it came through the distribution
 * (the origin secret matches), otherwise the address API Gateway (or the local server) saw.
 *
 * @param secret the expected origin secret; @default process.env.ORIGIN_VERIFY_SECRET (unset locally: the header is never trusted)
 */
export function sourceAddressOf(event: APIGatewayProxyEventV2, secret = process.env[ORIGIN_VERIFY_SECRET_ENV]): string {
  const direct = event.requestContext?.http?.sourceIp ?? '';
  if (!secret) return direct;
  const headers = event.headers ?? {};
  const proof = headers[ORIGIN_VERIFY_HEADER];
  if (proof === undefined || !sameSecret(proof, secret)) return direct;
  return viewerAddressOf(headers['cloudfront-viewer-address']) ?? direct;
}
