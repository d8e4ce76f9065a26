/** Workflow task: complete an attempt (metrics, net refund, capacity release, `enriched`). */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { completeEnrichment } from '../lib/enrichment/steps';
import { stepDependencies } from '../lib/enrichment/dependencies';

export const handler = createTaskHandler((input: Parameters<typeof completeEnrichment>[1]) => completeEnrichment(stepDependencies(), input));
