/** Workflow task: write the completed attempt's recency marker, then clear its pending completion. */
import { accountHistoryFor, enrichment, organizations, createTaskHandler, finishRecording } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof finishRecording>[1]) =>
  finishRecording(
    { enrichment: enrichment(), accountHistory: accountHistoryFor(input.organizationId), organizations: organizations() },
    input,
  ),
);
