/**
 * The delivery schedule in AWS (docs/webhooks.md): one Step Functions Standard
 * execution per message (infra/webhook-delivery.ts), named after the message,
 * so starting it twice (a retried stream batch) starts it once.
 */
import { ExecutionAlreadyExists, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { DeliveryScheduler } from './delivery';

/** Starts the delivery execution of each new message. */
export function createStepFunctionsScheduler({
  client,
  stateMachineArn,
}: {
  client: SFNClient;
  stateMachineArn: string;
}): DeliveryScheduler {
  return {
    async start({ organizationId, messageId }) {
      try {
        await client.send(
          new StartExecutionCommand({ stateMachineArn, name: messageId, input: JSON.stringify({ organizationId, messageId }) }),
        );
      } catch (error) {
        // An execution of this message exists already (running or finished): it owns the schedule.
        if (!(error instanceof ExecutionAlreadyExists)) throw error;
      }
    },
  };
}

/** The local stack's schedule: nothing to start; its poller reads due messages from the pending index (infra/local/webhooks.ts). */
export const pendingIndexScheduler: DeliveryScheduler = { start: async () => undefined };
