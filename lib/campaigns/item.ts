/**
 * The one owner of the campaign item (docs/data-model.md): how a
 * {@link CampaignRecord} maps to and from DynamoDB, the index keys each status
 * derives, the named conditions campaign writes rely on (`conditions.ts`) and every state
 * change as a {@link Change} (`changes.ts`; docs/README.md#a-campaigns-life-in-one-paragraph; docs/launch.md, docs/csv.md).
 * Conditions and changes are one export each, read through a namespace import
 * (`import * as campaignIs from './conditions'`), so a bundle carries those its
 * function writes (docs/deploy.md "Prerequisites").
 *
 * Stores compose these into UpdateItem calls or transaction items; no other
 * module spells a campaign attribute in an expression.
 */
import * as keys from '../db/keys';
import type { Change } from '../db/expression';
import type { CampaignStatus } from '../errors';
import type { CampaignRecord } from './model';

/** Key and bookkeeping attributes of the item that are not part of the record. */
const ITEM_ONLY_ATTRIBUTES = [
  'pk',
  'sk',
  'type',
  'gsi1pk',
  'gsi2pk',
  'gsi3pk',
  'gsi4pk',
  'listSk',
  'gsi5pk',
  'expirySk',
  'gsi6pk',
  'launchLock',
] as const;

/** Maps a stored campaign item to its {@link CampaignRecord}. */
export function toCampaignRecord(item: Record<string, unknown>): CampaignRecord {
  const record = { ...item };
  for (const attribute of ITEM_ONLY_ATTRIBUTES) delete record[attribute];
  return record as unknown as CampaignRecord;
}

/** The item of a new campaign: the record plus its table and index keys. */
export function campaignItem(record: CampaignRecord): Record<string, unknown> {
  return {
    ...keys.campaign(record.organizationId, record.id),
    ...keys.campaignIndexes(record.organizationId, record),
    type: 'campaign',
    ...record,
  };
}

/** The campaign identity every change needs: its key and the parts its index keys derive from. */
export type CampaignRef = Pick<CampaignRecord, 'organizationId' | 'id' | 'createdVia'>;

/**
 * Moving to `status`, with the index keys that follow from it: the status
 * list partitions always; the sparse expiry index only while `enriched`.
 */
export function statusChange(campaign: CampaignRef & { createdAt?: string }, status: CampaignStatus, resultsExpireAt?: string): Change {
  const indexKeys = keys.campaignIndexes(campaign.organizationId, {
    id: campaign.id,
    createdAt: campaign.createdAt ?? '',
    status,
    createdVia: campaign.createdVia,
    resultsExpireAt,
  });
  const expiry = status === 'enriched' && resultsExpireAt ? { gsi5pk: indexKeys.gsi5pk, expirySk: indexKeys.expirySk } : undefined;
  return {
    set: { status, gsi2pk: indexKeys.gsi2pk, gsi4pk: indexKeys.gsi4pk, ...expiry },
    remove: expiry ? [] : ['gsi5pk', 'expirySk'],
  };
}
