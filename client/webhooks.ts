/**
 * Verifying the campaign events this API pushes (client/README.md "Webhooks"): Standard
 * Webhooks 1.0 signatures, checked with the `standardwebhooks` library.
 *
 * `webhook-signature` may carry two signatures for 24 h after
 * `rotate-secret` (the new secret's and the previous one's): one secret
 * verifies it, and during a rotation the receiver may try both.
 *
 * @example
 * // In an HTTP handler, with the raw body (not re-serialized JSON):
 * const event = verifyWebhook(rawBody, request.headers, [process.env.WEBHOOK_SECRET!]);
 * if (event.type === 'campaign.enriched') console.log(event.data.campaign.results);
 */
import { Webhook } from 'standardwebhooks';
import type { components } from './schema.js';

type Schemas = components['schemas'];
/** An event body, typed by `type` (the document's `webhooks` section). */
export type WebhookEvent = { [K in keyof Schemas]: K extends `WebhookEvent_${string}` ? Schemas[K] : never }[keyof Schemas];

/** Thrown when no secret verifies the request (forged, altered, or older than 5 minutes). */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/**
 * Verifies a webhook request and returns its event.
 * @param body - the raw request body, exactly as received (string or bytes).
 * @param headers - the request headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`); names in any case.
 * @param secrets - the endpoint's secret(s) (`whsec_…`); during a rotation, the new one and the previous one.
 * @throws WebhookVerificationError when no secret verifies the signature, or the timestamp is more than 5 minutes off.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: Record<string, string | string[] | undefined> | Headers,
  secrets: readonly string[],
): WebhookEvent {
  const lower: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) if (value !== undefined) lower[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  let lastError: unknown;
  for (const secret of secrets) {
    try {
      return new Webhook(secret).verify(payload, lower) as WebhookEvent;
    } catch (error) {
      lastError = error;
    }
  }
  throw new WebhookVerificationError(
    `No secret verifies this webhook request${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
  );
}
