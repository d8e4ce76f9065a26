/** The caller's address behind CloudFront (lib/http/source-address.ts, docs/deploy.md#edge-protection). */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ORIGIN_VERIFY_HEADER, sourceAddressOf, viewerAddressOf } from '../../lib/http/source-address';

const event = (headers: Record<string, string>, sourceIp = '130.176.1.2') =>
  ({ headers, requestContext: { http: { sourceIp } } }) as unknown as APIGatewayProxyEventV2;

describe('sourceAddressOf', () => {
  const secret = 'origin-secret-value';

  it("takes CloudFront-Viewer-Address only from a request carrying the distribution's origin secret", () => {
    expect(sourceAddressOf(event({ [ORIGIN_VERIFY_HEADER]: secret, 'cloudfront-viewer-address': '198.51.100.7:46532' }), secret)).toBe(
      '198.51.100.7',
    );
    expect(sourceAddressOf(event({ [ORIGIN_VERIFY_HEADER]: 'guess', 'cloudfront-viewer-address': '198.51.100.7:46532' }), secret)).toBe(
      '130.176.1.2',
    );
    expect(sourceAddressOf(event({ 'cloudfront-viewer-address': '198.51.100.7:46532' }), secret)).toBe('130.176.1.2');
  });

  it('never trusts the header where no secret is configured (the local stack)', () => {
    expect(
      sourceAddressOf(event({ [ORIGIN_VERIFY_HEADER]: '', 'cloudfront-viewer-address': '198.51.100.7:1' }, '127.0.0.1'), undefined),
    ).toBe('127.0.0.1');
  });

  it('falls back to the address API Gateway saw when the viewer header is malformed', () => {
    expect(sourceAddressOf(event({ [ORIGIN_VERIFY_HEADER]: secret, 'cloudfront-viewer-address': 'evil<script>:80' }), secret)).toBe(
      '130.176.1.2',
    );
  });
});

describe('viewerAddressOf', () => {
  it('reads IPv4 and IPv6 addresses before the port', () => {
    expect(viewerAddressOf('198.51.100.7:46532')).toBe('198.51.100.7');
    expect(viewerAddressOf('2001:db8::1:46532')).toBe('2001:db8::1');
    expect(viewerAddressOf('[2001:db8::1]:443')).toBe('2001:db8::1');
    for (const bad of [undefined, '', '198.51.100.7', ':80', 'host:port']) expect(viewerAddressOf(bad), String(bad)).toBeUndefined();
  });
});
