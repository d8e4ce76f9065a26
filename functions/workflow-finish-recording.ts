/** Workflow task: write the completed attempt's recency marker, then clear its pending completion. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { finishRecording } from '../lib/enrichment/steps';
import { accountHistory, enrichment, organizations } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof finishRecording>[1]) =>
  finishRecording({ enrichment: enrichment(), accountHistory: accountHistory(), organizations: organizations() }, input),
);
