/** Workflow task: mark the campaign `expired` at `resultsExpireAt` and delete its attempts' and evaluations' objects. */
import { campaigns, enrichment, objects, createTaskHandler, expireResults } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof expireResults>[1]) =>
  expireResults({ enrichment: enrichment(), campaigns: campaigns(), objects: objects() }, input),
);
