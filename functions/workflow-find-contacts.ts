/** Workflow task: find contacts for one batch of eligible accounts. */
import { accountLists, campaigns, deliveries, objects, outcomes, results, warehouseFor, createTaskHandler, findContactsBatch } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof findContactsBatch>[1]) =>
  findContactsBatch({ accountLists: accountLists(), warehouse: warehouseFor(input.organizationId), results: results(), outcomes: outcomes(), campaigns: campaigns(), objects: objects(), deliveries }, input),
);
