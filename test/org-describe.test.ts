import { describe, expect, it } from 'vitest';
import { call, newOrganization, useApi } from './support/api';

const api = useApi();

describe('POST /v1/org/describe', () => {
  it('returns the organization of a good key', async () => {
    const { organizationId, apiKey } = await newOrganization({
      name: 'Describe Co',
      smbCredits: 1234,
      researchAgentCredits: 7,
      maxEnrichingAccounts: 900,
    });
    const res = await call(api(), '/v1/org/describe', { apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        organization: { id: organizationId, name: 'Describe Co' },
        credits: { smb: 1234, researchAgents: 7 },
        enrichment: { enrichingAccounts: 0, maxEnrichingAccounts: 900 },
      },
      error: null,
    });
  });
});
