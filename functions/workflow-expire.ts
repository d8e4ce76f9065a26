/** Workflow task: mark the campaign `expired` at `resultsExpireAt`. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { expireResults } from '../lib/enrichment/steps';
import { stepDependencies } from '../lib/enrichment/dependencies';

export const handler = createTaskHandler((input: Parameters<typeof expireResults>[1]) => expireResults(stepDependencies(), input));
