/**
 * Local-stack recovery. Local executions live in the server process, so a
 * restart loses the ones that were running. Every workflow step is
 * idempotent, so each campaign still `enriching` gets its attempt's execution
 * started again with the same input (same name: the attempt ID) and finishes
 * normally. On AWS executions are durable and this is not needed.
 */
import { paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toCampaignRecord } from '../../lib/campaigns/item';
import { executionInputOf, type WorkflowPort } from '../../lib/enrichment/workflow';

/** Restarts the executions of campaigns left `enriching`; returns how many. */
export async function resumeInterruptedEnrichments(client: DynamoDBDocumentClient, tableName: string, workflow: WorkflowPort): Promise<number> {
  let resumed = 0;
  // A Scan is acceptable here: local stack only, once at start.
  const pages = paginateScan(
    { client },
    {
      TableName: tableName,
      FilterExpression: '#type = :campaign AND #status = :enriching',
      ExpressionAttributeNames: { '#type': 'type', '#status': 'status' },
      ExpressionAttributeValues: { ':campaign': 'campaign', ':enriching': 'enriching' },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const campaign = toCampaignRecord(item);
      if (!campaign.attempt) continue;
      await workflow.start(executionInputOf(campaign, campaign.attempt));
      resumed++;
    }
  }
  return resumed;
}
