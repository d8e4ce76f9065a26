/** Workflow task: find contacts for one batch of eligible accounts. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { findContactsBatch } from '../lib/enrichment/steps';
import { accountLists, campaigns, objects, outcomes, results, warehouse } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof findContactsBatch>[1]) =>
  findContactsBatch({ accountLists: accountLists(), warehouse: warehouse(), results: results(), outcomes: outcomes(), campaigns: campaigns(), objects: objects() }, input),
);
