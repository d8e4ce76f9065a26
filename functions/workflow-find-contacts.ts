/** Workflow task: find contacts for one batch of eligible accounts. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { findContactsBatch } from '../lib/enrichment/steps';
import { stepDependencies } from '../lib/enrichment/dependencies';

export const handler = createTaskHandler((input: Parameters<typeof findContactsBatch>[1]) => findContactsBatch(stepDependencies(), input));
