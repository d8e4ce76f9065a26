/** Lambda of `POST /v1/webhooks/rotate-secret` (decisions §12). */
import { rotateWebhookSecretOperation } from '../lib/webhooks/schema';
import { rotateWebhookSecret } from '../lib/webhooks/use-cases';
import { idempotentApiHandler, webhooks } from '../lib/root';

export const handler = idempotentApiHandler(rotateWebhookSecretOperation, (input, { organizationId }) => rotateWebhookSecret({ webhooks: webhooks() }, organizationId, input.endpointId));
