/**
 * Task of the webhook delivery state machine (infra/webhook-delivery.ts): one
 * scheduled attempt of a message; the state machine waits `waitSeconds` and
 * comes back until `done`.
 */
import { deliveryDependencies, createTaskHandler, attemptDelivery } from '../lib/root';

interface DeliverInput {
  organizationId: string;
  messageId: string;
}

export const handler = createTaskHandler(async (input: DeliverInput) => {
  const outcome = await attemptDelivery(deliveryDependencies(), input.organizationId, input.messageId);
  const waitSeconds = outcome.done ? 0 : Math.max(1, Math.ceil((Date.parse(outcome.nextAttemptAt) - Date.now()) / 1000));
  return { organizationId: input.organizationId, messageId: input.messageId, done: outcome.done, waitSeconds };
});
