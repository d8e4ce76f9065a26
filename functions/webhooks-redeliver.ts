/** Lambda of `POST /v1/webhooks/redeliver` (docs/webhooks.md): one attempt, made in this invocation (15 s limit within the 29 s timeout). */
import { redeliverWebhookOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, deliveryDependencies, redeliverWebhook } from '../lib/root';

export const handler = idempotentApiHandler(redeliverWebhookOperation, (input, { organizationId, auditItem }) =>
  redeliverWebhook(deliveryDependencies(), organizationId, input, auditItem),
);
