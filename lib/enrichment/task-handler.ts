/**
 * Lambda handlers of the workflow's tasks: the step's input is the state's
 * input, its result the state's output; errors propagate so the state
 * machine's Retry and Catch decide.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import { logger } from '../observability';

/** A workflow task's Lambda handler. */
export type TaskHandler<I, O> = (input: I, context: Context) => Promise<O>;

/** Wraps a step as a Lambda handler with structured logging keyed by campaign and attempt. */
export function createTaskHandler<
  I extends { campaignId?: string; attemptId?: string; organizationId?: string; requestId?: string | null },
  O,
>(step: (input: I) => Promise<O>): TaskHandler<I, O> {
  return middy<I, O>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .handler(async (input) => {
      logger.appendKeys({
        organizationId: input.organizationId,
        campaignId: input.campaignId,
        attemptId: input.attemptId,
        ...(input.requestId ? { requestId: input.requestId } : {}),
      });
      const output = await step(input);
      logger.debug('Workflow task completed');
      return output;
    }) as unknown as TaskHandler<I, O>;
}
