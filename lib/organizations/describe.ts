/**
 * Describe organization (docs/limits.md#reading-your-limits).
 */
import { NotFoundError } from '../errors';
import { publicOrganizationId, type OrganizationRecord, type OrganizationStore } from './store';
import type { OrganizationDescription } from './docs';
import type { KeyCheck } from '../http/auth';

/**
 * Maps an organization record to the describe response. A test twin shows
 * the organization as its customer knows it, the live organization's ID and
 * name, with the twin's own test credits and capacity (docs/test-mode.md).
 */
export function toOrganizationDescription(organization: OrganizationRecord): OrganizationDescription {
  return {
    organization: { id: publicOrganizationId(organization), name: organization.name },
    credits: { smb: organization.smbCredits, researchAgents: organization.researchAgentCredits },
    enrichment: { enrichingAccounts: organization.enrichingAccounts, maxEnrichingAccounts: organization.maxEnrichingAccounts },
  };
}

/**
 * Reads the organization's balances (credits) and capacity (accounts), in one round trip.
 * @param keyCheck - the request's API-key check (lib/http/auth.ts), verified on the organization item it reads.
 * @throws NotFoundError when the organization item is missing (a key outliving its organization).
 * @throws InvalidApiKeyError, RevokedApiKeyError from the key check.
 */
export async function describeOrganization(
  store: Pick<OrganizationStore, 'get'>,
  organizationId: string,
  keyCheck?: KeyCheck,
): Promise<OrganizationDescription> {
  const organization = await store.get(organizationId, keyCheck);
  if (!organization) throw new NotFoundError('organization', organizationId);
  return toOrganizationDescription(organization);
}
