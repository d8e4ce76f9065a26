/** Lambda of `POST /v1/webhooks/deliveries` (docs/webhooks.md). */
import { listWebhookDeliveriesOperation } from '../lib/webhooks/schema';
import { apiHandler, webhookDeliveryLog, listWebhookDeliveries } from '../lib/root';

export const handler = apiHandler(listWebhookDeliveriesOperation, (input, { organizationId }) =>
  listWebhookDeliveries({ webhooks: webhookDeliveryLog() }, organizationId, input),
);
