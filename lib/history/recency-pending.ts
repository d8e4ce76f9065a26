/**
 * Completions whose history entries are not written yet (docs/launch.md;
 * docs/data-model.md "Recency and CRM targets"). The completion transaction
 * sets one attribute `recencyPending_<campaignId>` = `{completedAt,
 * eligibleObjectKey}` on the organization item; the FinishRecording step
 * writes the campaign's accounts into the history shards (lib/history/store.ts)
 * and only then removes the attribute. An evaluation reads the organization
 * item first and the shards second (strongly consistent), so every completion
 * is seen either here or in the shards.
 *
 * Top-level attributes rather than one map: an UpdateExpression can SET a
 * top-level attribute on an item that has none yet, and campaign IDs are
 * alphanumeric, so the attribute name is a valid expression placeholder.
 */

/** One completion awaiting its history entries. */
export interface PendingRecency {
  campaignId: string;
  /** When the campaign reached `enriched` (ISO 8601 UTC). */
  completedAt: string;
  /** Object key of the attempt's eligible list. */
  eligibleObjectKey: string;
}

const PREFIX = 'recencyPending_';

/** Name of the organization item's attribute for a campaign's pending completion. */
export const pendingRecencyAttribute = (campaignId: string): string => `${PREFIX}${campaignId}`;

/** The attribute's value. */
export const pendingRecencyValue = (pending: Omit<PendingRecency, 'campaignId'>) => ({
  completedAt: pending.completedAt,
  eligibleObjectKey: pending.eligibleObjectKey,
});

/** Every pending completion stored on an organization item. */
export function pendingRecencyOf(item: Record<string, unknown>): PendingRecency[] {
  return Object.entries(item).flatMap(([name, value]) => {
    if (!name.startsWith(PREFIX) || typeof value !== 'object' || value === null) return [];
    const { completedAt, eligibleObjectKey } = value as Record<string, unknown>;
    return typeof completedAt === 'string' && typeof eligibleObjectKey === 'string'
      ? [{ campaignId: name.slice(PREFIX.length), completedAt, eligibleObjectKey }]
      : [];
  });
}
