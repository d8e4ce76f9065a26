/**
 * Every webhook event with its body schema, description and example, joined
 * from the domains that own them (lib/webhooks/docs.ts, lib/privacy/docs.ts):
 * the one list the OpenAPI `webhooks` section and the AsyncAPI document are
 * both built from.
 */
import { EVENT_DESCRIPTIONS, EVENT_EXAMPLES, eventFeedOperationDoc, eventPayloadSchemas } from '../webhooks/docs';
import { PRIVACY_EVENT_DESCRIPTIONS, PRIVACY_EVENT_EXAMPLES, privacyEventPayloadSchemas } from '../privacy/docs';
import type { WebhookEventType } from '../webhooks/events';

/** Every event type with its body schema, in document order. */
export const allEventPayloadSchemas = () => [...eventPayloadSchemas(), ...privacyEventPayloadSchemas()];

/** The event feed's documentation: its events are every domain's (docs/events.md). */
export const eventFeedDoc = () => eventFeedOperationDoc(allEventPayloadSchemas());

/** What each event means. */
export const ALL_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = { ...EVENT_DESCRIPTIONS, ...PRIVACY_EVENT_DESCRIPTIONS };

/** A real-looking body of each event. */
export const ALL_EVENT_EXAMPLES: Record<WebhookEventType, unknown> = { ...EVENT_EXAMPLES, ...PRIVACY_EVENT_EXAMPLES };
