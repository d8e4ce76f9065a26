/** Lambda of `POST /v1/webhooks/rotate-secret` (docs/webhooks.md). */
import { rotateWebhookSecretOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhookSecretRotator, rotateWebhookSecret, endpointSecretAnswer } from '../lib/root';

// A saved answer holds no secret; a replay shows it only while it is still the endpoint's (docs/idempotency.md).
export const handler = idempotentApiHandler(
  rotateWebhookSecretOperation,
  (input, { organizationId, auditItem }) =>
    rotateWebhookSecret(
      { webhooks: webhookSecretRotator() },
      organizationId,
      input.endpointId,
      new Date(),
      auditItem && (() => auditItem()),
    ),
  {
    savedAnswer: endpointSecretAnswer(() => ({ webhooks: webhookSecretRotator() })),
  },
);
