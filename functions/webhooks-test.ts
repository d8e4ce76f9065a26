/** Lambda of `POST /v1/webhooks/test` (docs/webhooks.md). */
import { testWebhookEndpointOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhookTestSender, sendTestEvent } from '../lib/root';

export const handler = idempotentApiHandler(testWebhookEndpointOperation, (input, { organizationId, auditItem }) =>
  sendTestEvent({ webhooks: webhookTestSender() }, organizationId, input.endpointId, new Date(), auditItem && (() => auditItem())),
);
