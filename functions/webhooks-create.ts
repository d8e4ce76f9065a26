/** Lambda of `POST /v1/webhooks/create` (decisions §12). */
import { createWebhookEndpointOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhookDependencies, createWebhookEndpoint, endpointSecretAnswer } from '../lib/root';

// A saved answer holds no secret; a replay shows it only while it is still the endpoint's (decisions §10).
export const handler = idempotentApiHandler(createWebhookEndpointOperation, (input, { organizationId }) => createWebhookEndpoint(webhookDependencies(), organizationId, input), {
  savedAnswer: endpointSecretAnswer(webhookDependencies),
});
