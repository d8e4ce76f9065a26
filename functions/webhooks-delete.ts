/** Lambda of `POST /v1/webhooks/delete` (decisions §12). */
import { deleteWebhookEndpointOperation } from '../lib/webhooks/schema';
import { deleteWebhookEndpoint } from '../lib/webhooks/use-cases';
import { apiHandler, webhooks } from '../lib/root';

export const handler = apiHandler(deleteWebhookEndpointOperation, (input, { organizationId }) => deleteWebhookEndpoint({ webhooks: webhooks() }, organizationId, input.endpointId));
