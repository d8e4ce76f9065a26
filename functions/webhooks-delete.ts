/** Lambda of `POST /v1/webhooks/delete` (decisions §12). */
import { deleteWebhookEndpointOperation } from '../lib/webhooks/schema';
import { deleteWebhookEndpoint } from '../lib/webhooks/use-cases';
import { idempotentApiHandler, webhooks } from '../lib/root';

export const handler = idempotentApiHandler(deleteWebhookEndpointOperation, (input, { organizationId }) => deleteWebhookEndpoint({ webhooks: webhooks() }, organizationId, input.endpointId));
