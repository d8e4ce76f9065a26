/** Workflow task: compensate a failed attempt (full refund, capacity released, back to `draft`). */
import { createTaskHandler } from '../lib/enrichment/task-handler';
import { compensateAttempt } from '../lib/enrichment/steps';
import { enrichment } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof compensateAttempt>[1]) => compensateAttempt({ enrichment: enrichment() }, input));
