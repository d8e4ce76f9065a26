/** Workflow task: complete an attempt (metrics, net refund, capacity release, `enriched`). */
import { campaignReader, enrichment, createTaskHandler, completeEnrichment, resultsAccessPeriodFor } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof completeEnrichment>[1]) =>
  completeEnrichment(
    { campaigns: campaignReader(), enrichment: enrichment(), resultsAccessPeriodSeconds: resultsAccessPeriodFor(input.organizationId) },
    input,
  ),
);
