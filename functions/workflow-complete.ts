/** Workflow task: complete an attempt (metrics, net refund, capacity release, `enriched`). */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { completeEnrichment } from '../lib/enrichment/steps';
import { config } from '../lib/config';
import { campaigns, enrichment } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof completeEnrichment>[1]) =>
  completeEnrichment({ campaigns: campaigns(), enrichment: enrichment(), resultsAccessPeriodSeconds: config.resultsAccessPeriodSeconds }, input),
);
