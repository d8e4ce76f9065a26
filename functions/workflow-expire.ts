/** Workflow task: mark the campaign `expired` at `resultsExpireAt`. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { expireResults } from '../lib/enrichment/steps';
import { enrichment } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof expireResults>[1]) => expireResults({ enrichment: enrichment() }, input));
