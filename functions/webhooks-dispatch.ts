/**
 * Lambda on the table's stream (docs/webhooks.md): each new webhook event item
 * (the stream's filter lets only those through) is fanned out to its
 * endpoints, one delivery execution per message. A failure fails the batch
 * item by item (ReportBatchItemFailures), so the stream retries only what failed.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { deliveryDependencies, dispatchEvent, logger } from '../lib/root';

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const batchItemFailures: DynamoDBBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) continue;
    const item = unmarshall(image as Record<string, AttributeValue>);
    try {
      await dispatchEvent(deliveryDependencies(), String(item.organizationId), String(item.id));
    } catch (error) {
      logger.error('Webhook event dispatch failed', { error, organizationId: item.organizationId, eventId: item.id });
      batchItemFailures.push({ itemIdentifier: record.dynamodb!.SequenceNumber! });
    }
  }
  return { batchItemFailures };
};
