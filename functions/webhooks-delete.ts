/** Lambda of `POST /v1/webhooks/delete` (docs/webhooks.md). */
import { deleteWebhookEndpointOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhookEndpointDeleter, deleteWebhookEndpoint } from '../lib/root';

export const handler = idempotentApiHandler(deleteWebhookEndpointOperation, (input, { organizationId, auditItem }) =>
  deleteWebhookEndpoint({ webhooks: webhookEndpointDeleter() }, organizationId, input.endpointId, auditItem && (() => auditItem())),
);
