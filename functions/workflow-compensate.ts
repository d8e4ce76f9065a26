/** Workflow task: compensate a failed attempt (full refund, capacity released, back to `draft`; its result parts and batch objects deleted). */
import { campaigns, enrichment, objects, createTaskHandler, compensateAttempt } from '../lib/root';

export const handler = createTaskHandler((input: Parameters<typeof compensateAttempt>[1]) =>
  compensateAttempt({ enrichment: enrichment(), campaigns: campaigns(), objects: objects() }, input),
);
