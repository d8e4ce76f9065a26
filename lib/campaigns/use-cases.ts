/**
 * Campaign use cases: create, update, get, list (docs/README.md;
 * docs/campaigns.md, docs/pagination.md, docs/csv.md).
 */
import { beforeDeadline, throwIfPastDeadline } from '../http/deadline';
import { setting, cursorSecretSetting } from '../config';
import { CampaignNotEditableError, InvalidRequestError, NotFoundError, type CampaignStatus } from '../errors';
import { newCampaignId } from '../ids';
import { accountListKey, distinctAccountIds } from '../account-lists/account-list';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { statusAt, toCampaign, toListItem, type CampaignRecord } from './model';
import { DEFAULT_PAGE_SIZE, type CreatedVia, type ListCampaignsInput } from './schema';
import type { Campaign, CampaignListItem } from './docs';
import type { CampaignStore } from './store';
import type { AccountListStore } from '../account-lists/account-list';
import type { OrganizationStore } from '../organizations/store';
import type { KeyCheck } from '../http/auth';
import type { IdempotentWork } from '../idempotency/store';
import type { RequestContext } from '../http/pipeline';
import type { QuotaUse } from '../http/rate-limit';

/** What the campaign use cases need. */
export interface CampaignDependencies {
  campaigns: CampaignStore;
  organizations: OrganizationStore;
  accountLists: AccountListStore;
  /**
   * Counts the account IDs a create stores against the organization's storage quota, when it has one (a test
   * twin's per day: docs/test-mode.md, "Limits of test mode"); `undefined` when none applies.
   * @throws RateLimitedError (429 `rate_limited`, policy `testAccountIds`) past it; nothing is counted then.
   */
  storageQuota?: (organizationId: string, accountIds: number) => Promise<QuotaUse | undefined>;
}

/** Input of {@link createCampaign}. */
export interface NewCampaign {
  organizationId: string;
  name: string;
  accountIds: readonly string[];
  excludeEnrichedWithinDays?: number | null;
  /** Surface; `api` for the API, `ui`/`data_cube` for the operator import. */
  createdVia?: CreatedVia;
  /** Initial status: `draft`, or `tam_only` for interface campaigns. */
  status?: Extract<CampaignStatus, 'draft' | 'tam_only'>;
}

/**
 * Create under an `Idempotency-Key` (docs/idempotency.md): a create that wrote its
 * campaign answers that campaign again, whatever happened to its answer (a
 * 5xx, a killed function, a failed save): the campaign is written in one
 * transaction with the key's work marker, and the marker is looked for
 * before anything else, so a retry never writes a second draft.
 * @param create - the create itself, given the marker item to write with the campaign; run only when the key did no work yet.
 * @returns the campaign the key created (as it is now), or what `create` returns.
 */
export async function createCampaignOnce(
  deps: Pick<CampaignDependencies, 'campaigns'>,
  organizationId: string,
  work: IdempotentWork | undefined,
  create: (workItem?: IdempotentWork['workItem']) => Promise<Campaign>,
): Promise<Campaign> {
  const created = work ? await work.find() : undefined;
  if (created !== undefined) return getCampaign(deps, organizationId, created);
  return create(work && ((campaignId) => work.workItem(campaignId)));
}

/** The organization's smb balance (credits), read alone (not the whole item). @throws NotFoundError for an unknown organization. */
const liveBalance = async (deps: { organizations: Pick<OrganizationStore, 'smbCredits'> }, organizationId: string): Promise<number> => {
  const balance = await deps.organizations.smbCredits(organizationId);
  if (balance === undefined) throw new NotFoundError('organization', organizationId);
  return balance;
};

/**
 * Creates a campaign in `draft` (docs/campaigns.md): the distinct account IDs go
 * to S3 first, then the campaign item is written.
 * @param signal - the request's deadline (lib/http/deadline.ts): once it fires, no campaign is written.
 * @param workItem - the `Idempotency-Key`'s work marker to write with the campaign ({@link createCampaignOnce}).
 * @param auditItem - the request's audit entry (docs/audit.md), written with the campaign.
 * @returns the campaign; `credits.remaining` is the organization's balance (credits).
 * @throws DeadlineExceededError past the deadline (nothing written but an unreferenced account list).
 * @throws RateLimitedError past the organization's storage quota ({@link CampaignDependencies.storageQuota}); nothing written.
 */
export async function createCampaign(
  deps: CampaignDependencies,
  input: NewCampaign,
  signal?: AbortSignal,
  workItem?: IdempotentWork['workItem'],
  auditItem?: RequestContext['auditItem'],
): Promise<Campaign> {
  const id = newCampaignId();
  const accountIds = distinctAccountIds(input.accountIds);
  const record: CampaignRecord = {
    id,
    organizationId: input.organizationId,
    name: input.name,
    status: input.status ?? 'draft',
    createdVia: input.createdVia ?? 'api',
    excludeEnrichedWithinDays: input.excludeEnrichedWithinDays ?? null,
    createdAt: new Date().toISOString(),
    accountsRequested: accountIds.length,
    accountsObjectKey: accountListKey(input.organizationId, id),
    accountsEligible: null,
    accountsExcluded: null,
    creditsCharged: 0,
    lastEnrichment: null,
  };
  // Counted before anything is stored; given back when the create fails (docs/limits.md, "Exports and uploads per hour").
  const quota = await deps.storageQuota?.(input.organizationId, accountIds.length);
  try {
    const [, remaining] = await beforeDeadline(
      signal,
      Promise.all([deps.accountLists.put(record.accountsObjectKey, accountIds), liveBalance(deps, input.organizationId)]),
    );
    // Past the deadline (lib/http/deadline.ts) the campaign is not written: the caller was told it failed.
    throwIfPastDeadline(signal);
    // With the key's work marker, in the same transaction (createCampaignOnce).
    await deps.campaigns.create(record, [...(workItem ? [workItem(record.id)] : []), ...(auditItem ? [auditItem(record.id)] : [])]);
    return toCampaign(record, remaining);
  } catch (error) {
    await quota?.giveBack().catch(() => undefined);
    throw error;
  }
}

/**
 * Reads a campaign with the organization's live balance, in one round trip.
 * @param keyCheck - the request's API-key check (lib/http/auth.ts), verified on the organization item read beside the campaign.
 * @throws NotFoundError for an unknown campaign or one of another organization.
 * @throws InvalidApiKeyError, RevokedApiKeyError from the key check.
 */
export async function getCampaign(
  deps: { campaigns: Pick<CampaignStore, 'getWithOrganization'> },
  organizationId: string,
  campaignId: string,
  keyCheck?: KeyCheck,
): Promise<Campaign> {
  const { campaign, organization } = await deps.campaigns.getWithOrganization(organizationId, campaignId, keyCheck);
  if (!campaign) throw new NotFoundError('campaign', campaignId);
  return toCampaign(campaign, organization?.smbCredits ?? 0);
}

/**
 * Updates `name` and/or `excludeEnrichedWithinDays` of an API-created draft; with `auditItem` (the
 * request's audit entry, docs/audit.md) in one transaction with it.
 * @throws InvalidRequestError when neither field is given.
 * @throws NotFoundError for an unknown campaign.
 * @throws CampaignNotEditableError when the campaign is not an API-created draft (`details.status`).
 */
export async function updateCampaign(
  deps: { campaigns: Pick<CampaignStore, 'updateDraft'>; organizations: Pick<OrganizationStore, 'smbCredits'> },
  organizationId: string,
  input: { campaignId: string; name?: string; excludeEnrichedWithinDays?: number | null },
  auditItem?: RequestContext['auditItem'],
): Promise<Campaign> {
  if (input.name === undefined && input.excludeEnrichedWithinDays === undefined) {
    throw new InvalidRequestError('Give name and/or excludeEnrichedWithinDays to change.', [
      'body: at least one of name, excludeEnrichedWithinDays is required',
    ]);
  }
  // The balance is read beside the update (it does not depend on it): one round trip less on the critical path.
  const [outcome, remaining] = await Promise.all([
    deps.campaigns.updateDraft(
      organizationId,
      input.campaignId,
      {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.excludeEnrichedWithinDays !== undefined ? { excludeEnrichedWithinDays: input.excludeEnrichedWithinDays } : {}),
      },
      auditItem ? [auditItem(input.campaignId)] : [],
    ),
    liveBalance(deps, organizationId),
  ]);
  if (!outcome.ok) {
    if (!outcome.current) throw new NotFoundError('campaign', input.campaignId);
    const status = statusAt(outcome.current, new Date());
    throw new CampaignNotEditableError(
      status,
      outcome.current.createdVia !== 'api'
        ? `Only API-created campaigns can be updated; this one was created via "${outcome.current.createdVia}".`
        : outcome.launching
          ? 'An enrich call is evaluating this campaign right now; retry shortly.'
          : undefined,
    );
  }
  return toCampaign(outcome.campaign, remaining);
}

const asArray = <T>(value: T | T[] | undefined): T[] | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];

/**
 * One page of list items, newest first (docs/pagination.md).
 * @param keyCheck - the request's API-key check (lib/http/auth.ts): an index Query cannot carry the key item, so it is read beside the Query, in parallel.
 * @throws InvalidRequestError for a cursor that was altered, belongs to another organization, or comes with other filters or limit.
 * @throws InvalidApiKeyError, RevokedApiKeyError from the key check.
 */
export async function listCampaigns(
  deps: { campaigns: Pick<CampaignStore, 'list'> },
  organizationId: string,
  input: ListCampaignsInput,
  keyCheck?: KeyCheck,
): Promise<{ campaigns: CampaignListItem[]; nextCursor: string | null }> {
  const statuses = asArray(input.filters?.status);
  const createdVia = asArray(input.filters?.createdVia);
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const binding = {
    o: organizationId,
    f: JSON.stringify([statuses ? [...new Set(statuses)].sort() : null, createdVia ? [...new Set(createdVia)].sort() : null]),
    l: limit,
  };
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, setting(cursorSecretSetting), binding);
  const now = new Date();
  const [page] = await Promise.all([deps.campaigns.list({ organizationId, statuses, createdVia, limit, after, now }), keyCheck?.ensure()]);
  const last = page.items.at(-1);
  return {
    campaigns: page.items.map((item) => toListItem(item, now)),
    nextCursor: page.hasMore && last ? encodeCursor({ ...binding, a: last.listSk }, setting(cursorSecretSetting)) : null,
  };
}
