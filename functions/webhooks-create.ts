/** Lambda of `POST /v1/webhooks/create` (docs/webhooks.md). */
import { createWebhookEndpointOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhookDependencies, createWebhookEndpoint, endpointSecretAnswer } from '../lib/root';

// A saved answer holds no secret; a replay shows it only while it is still the endpoint's (docs/idempotency.md).
export const handler = idempotentApiHandler(
  createWebhookEndpointOperation,
  (input, { organizationId, auditItem }) =>
    createWebhookEndpoint(webhookDependencies(), organizationId, input, new Date(), auditItem && (() => auditItem())),
  {
    savedAnswer: endpointSecretAnswer(webhookDependencies),
  },
);
