/** Lambda of `POST /v1/webhooks/list` (decisions §12). */
import { listWebhookEndpointsOperation } from '../lib/webhooks/schema';
import { apiHandler, webhooks, listWebhookEndpoints } from '../lib/root';

export const handler = apiHandler(listWebhookEndpointsOperation, (_input, { organizationId }) => listWebhookEndpoints({ webhooks: webhooks() }, organizationId));
