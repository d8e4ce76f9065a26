/**
 * The erasure job's worker in AWS (docs/privacy.md "The erasure job"): the
 * erasure queue's messages, one job each, run by the same code the local
 * stack runs in its own process (lib/privacy/erasure.ts `runErasure`). A
 * failed job fails its message only (ReportBatchItemFailures): SQS redelivers
 * it after the visibility timeout, and the rerun resumes from the job's saved
 * progress; after the queue's receive limit the message goes to the
 * dead-letter queue (alarmed) and the job stays `running` for the operator.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger, runErasureJob, type ErasureJobMessage } from '../lib/root';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const message = JSON.parse(record.body) as ErasureJobMessage;
    try {
      await runErasureJob(message);
    } catch (error) {
      logger.error('Erasure job failed', { error, erasureId: message.erasureId, receiveCount: record.attributes.ApproximateReceiveCount });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
};
