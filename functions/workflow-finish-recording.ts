/** Workflow task: every account's enrichment time is recorded; clear the recency-pending mark. */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { finishRecording } from '../lib/enrichment/steps';
import { enrichment } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof finishRecording>[1]) => finishRecording({ enrichment: enrichment() }, input));
