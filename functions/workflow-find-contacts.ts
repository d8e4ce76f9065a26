/** Workflow task: find contacts for one batch of eligible accounts. */
import { accountLists, campaigns, objects, outcomes, results, warehouse, createTaskHandler, findContactsBatch } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof findContactsBatch>[1]) =>
  findContactsBatch({ accountLists: accountLists(), warehouse: warehouse(), results: results(), outcomes: outcomes(), campaigns: campaigns(), objects: objects() }, input),
);
