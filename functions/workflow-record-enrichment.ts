/** Workflow task: record per-account enrichment times for one batch. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { recordEnrichmentBatch } from '../lib/enrichment/steps';
import { accountHistory, accountLists } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof recordEnrichmentBatch>[1]) =>
  recordEnrichmentBatch({ accountLists: accountLists(), accountHistory: accountHistory() }, input),
);
