/** Lambda of `POST /v1/webhooks/create` (decisions §12). */
import { createWebhookEndpointOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhookDependencies, createWebhookEndpoint } from '../lib/root';

export const handler = idempotentApiHandler(createWebhookEndpointOperation, (input, { organizationId }) => createWebhookEndpoint(webhookDependencies(), organizationId, input));
