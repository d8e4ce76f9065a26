/**
 * Lambda handlers of the workflow's tasks: the step's input is the state's
 * input, its result the state's output; errors propagate so the state
 * machine's Retry and Catch decide.
 *
 * No middy: a task has no middleware but the logger's Lambda context, which
 * Powertools also takes by hand (`addContext`, then `resetKeys`), so the
 * task bundles do not carry the API pipeline's framework (bench `bundles`).
 */
import type { Context } from 'aws-lambda';
import { logger } from '../observability';

/** A workflow task's Lambda handler. */
export type TaskHandler<I, O> = (input: I, context: Context) => Promise<O>;

/**
 * Wraps a step as a Lambda handler with structured logging keyed by campaign and attempt: what Powertools'
 * `injectLambdaContext(logger, { resetKeys: true })` does (the invocation's context on every line, the event
 * logged when POWERTOOLS_LOGGER_LOG_EVENT asks, the keys of one invocation never on the next one's lines).
 */
export function createTaskHandler<
  I extends { campaignId?: string; attemptId?: string; organizationId?: string; requestId?: string | null },
  O,
>(step: (input: I) => Promise<O>): TaskHandler<I, O> {
  return async (input, context) => {
    logger.refreshSampleRateCalculation();
    logger.addContext(context);
    logger.logEventIfEnabled(input);
    try {
      logger.appendKeys({
        organizationId: input.organizationId,
        campaignId: input.campaignId,
        attemptId: input.attemptId,
        ...(input.requestId ? { requestId: input.requestId } : {}),
      });
      const output = await step(input);
      logger.debug('Workflow task completed');
      return output;
    } finally {
      logger.clearBuffer();
      logger.resetKeys();
    }
  };
}
