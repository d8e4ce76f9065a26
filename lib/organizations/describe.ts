/**
 * Describe organization (spec "Describe organization").
 */
import { NotFoundError } from '../errors';
import type { OrganizationRecord, OrganizationStore } from './store';
import type { OrganizationDescription } from './schema';

/** Maps an organization record to the describe response. */
export function toOrganizationDescription(organization: OrganizationRecord): OrganizationDescription {
  return {
    organization: { id: organization.id, name: organization.name },
    credits: { smb: organization.smbCredits, researchAgents: organization.researchAgentCredits },
    enrichment: { enrichingAccounts: organization.enrichingAccounts, maxEnrichingAccounts: organization.maxEnrichingAccounts },
  };
}

/**
 * Reads the organization's balances (credits) and capacity (accounts).
 * @throws NotFoundError when the organization item is missing (a key outliving its organization).
 */
export async function describeOrganization(store: OrganizationStore, organizationId: string): Promise<OrganizationDescription> {
  const organization = await store.get(organizationId);
  if (!organization) throw new NotFoundError('organization', organizationId);
  return toOrganizationDescription(organization);
}
