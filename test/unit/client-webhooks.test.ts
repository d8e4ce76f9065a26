/**
 * The client's webhook signature helper (client/webhooks.ts): what the API
 * signs with `standardwebhooks` verifies, with either secret during a
 * rotation; anything altered, unsigned or stale does not.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../client';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;
const event = {
  type: 'campaign.enriched',
  timestamp: '2026-11-23T16:00:00.000Z',
  data: { campaign: { id: 'camp_7Hq2kXv9LmN3pR5sT8wYz', status: 'enriched' } },
};

/** Headers as the API sends them: one signature per secret, space-separated. */
function signed(body: string, secrets: string[], at = new Date()) {
  const id = 'msg_2pQx7Lm4Nv8Rt3Ws9Yk5Z';
  const signature = secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}

describe('verifyWebhook', () => {
  it('returns the event when the secret verifies it, from a string or bytes, with headers in any case', () => {
    const key = secret();
    const body = JSON.stringify(event);
    const headers = signed(body, [key]);
    expect(verifyWebhook(body, headers, [key])).toEqual(event);
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), [key])).toEqual(event);
    expect(verifyWebhook(body, Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v])), [key])).toEqual(event);
  });

  it('verifies both signatures of a rotation, each with its own secret, and any secret list containing one', () => {
    const [next, previous] = [secret(), secret()];
    const body = JSON.stringify(event);
    const headers = signed(body, [next, previous]);
    expect(verifyWebhook(body, headers, [next])).toEqual(event);
    expect(verifyWebhook(body, headers, [previous])).toEqual(event);
    expect(verifyWebhook(body, headers, [secret(), previous])).toEqual(event);
  });

  it('refuses an altered body, another secret, a missing signature and a stale timestamp', () => {
    const key = secret();
    const body = JSON.stringify(event);
    const headers = signed(body, [key]);
    expect(() => verifyWebhook(body.replace('enriched', 'expired'), headers, [key])).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, headers, [secret()])).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, { ...headers, 'webhook-signature': undefined }, [key])).toThrow(WebhookVerificationError);
    const stale = signed(body, [key], new Date(Date.now() - 10 * 60_000));
    expect(() => verifyWebhook(body, stale, [key])).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, headers, [])).toThrow(WebhookVerificationError);
  });
});
