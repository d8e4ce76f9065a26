/** Lambda of `POST /v1/webhooks/list` (docs/webhooks.md). */
import { listWebhookEndpointsOperation } from '../lib/webhooks/schema';
import { apiHandler, webhookEndpointLister, listWebhookEndpoints } from '../lib/root';

export const handler = apiHandler(listWebhookEndpointsOperation, (_input, { organizationId }) =>
  listWebhookEndpoints({ webhooks: webhookEndpointLister() }, organizationId),
);
