/** Lambda of `POST /v1/webhooks/test` (decisions §12). */
import { testWebhookEndpointOperation } from '../lib/webhooks/schema';
import { sendTestEvent } from '../lib/webhooks/use-cases';
import { idempotentApiHandler, webhooks } from '../lib/root';

export const handler = idempotentApiHandler(testWebhookEndpointOperation, (input, { organizationId }) => sendTestEvent({ webhooks: webhooks() }, organizationId, input.endpointId));
