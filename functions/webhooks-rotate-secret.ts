/** Lambda of `POST /v1/webhooks/rotate-secret` (decisions §12). */
import { rotateWebhookSecretOperation } from '../lib/webhooks/schema';
import { idempotentApiHandler, webhooks, rotateWebhookSecret } from '../lib/root';

export const handler = idempotentApiHandler(rotateWebhookSecretOperation, (input, { organizationId }) => rotateWebhookSecret({ webhooks: webhooks() }, organizationId, input.endpointId));
