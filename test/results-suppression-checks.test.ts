/**
 * What a results page does for suppressions (docs/privacy.md
 * "Suppressions", lib/privacy/deliverable.ts): the organization's policy is
 * built once per page, and each stored contact of the page is checked once,
 * by the identifier digests its result part already holds (nothing decoded
 * or hashed per contact). A suppression added between two pages applies to
 * the next page. The page of `listCampaignResults` (lib/exports/results.ts)
 * over a campaign enriched through HTTP against the local stack, with the
 * composition root's real policy, its calls counted. Counts only.
 */
import { describe, expect, it } from 'vitest';
import { campaigns, deliveryPolicy, results, sequence } from '../lib/root';
import { listCampaignResults } from '../lib/exports/results';
import type { DeliveryPolicyOf } from '../lib/results/deliverable';
import { testContacts } from '../lib/test-mode/accounts';
import { call, useApi } from './support/api';
import { enrichedTestCampaign } from './enrichment/support';

const api = useApi();
const ACCOUNTS = 60;
/** Contacts the test warehouse gives a `test_found_` account. */
const CONTACTS = 3;

/** The root's policy with its builds and its checks counted. */
function countedPolicy() {
  const counts = { builds: 0, checks: 0 };
  const policyOf: DeliveryPolicyOf = async (organizationId) => {
    counts.builds++;
    const policy = await deliveryPolicy(organizationId);
    if (!policy.withholds) return policy;
    return {
      withholds: (digests, start, end) => {
        counts.checks++;
        return policy.withholds!(digests, start, end);
      },
    };
  };
  return { counts, policyOf };
}

describe('results page with suppressions in force', () => {
  it('builds the policy once per page and checks each stored contact once by its stored digests; a suppression added applies to the next page', async () => {
    const { organizationId, apiKey, campaignId, ids } = await enrichedTestCampaign(api(), ACCOUNTS);
    const suppress = async (emails: string[]) => {
      const res = await call(api(), '/v1/privacy/suppressions/create', {
        apiKey,
        body: { identifiers: emails.map((value) => ({ type: 'email', value })), reason: 'opt_out' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    // Every fourth account's first contact suppressed.
    await suppress(ids.filter((_, i) => i % 4 === 0).map((id) => testContacts(id)[0]!.email!));

    const { counts, policyOf } = countedPolicy();
    const deps = { campaigns: campaigns(), results: results(), sequence: sequence(), deliveryPolicy: policyOf };
    const page = async (afterSeq: number, limit: number) => {
      const answer = await listCampaignResults(deps, organizationId, { campaignId, afterSeq, limit });
      return JSON.parse(answer.accounts.text) as { accountId: string; contacts: unknown[] }[];
    };
    const first = await page(0, 20);
    expect(first).toHaveLength(20);
    // One policy for the page; one check per stored contact of its 20 accounts, none more.
    expect(counts).toEqual({ builds: 1, checks: 20 * CONTACTS });
    const withheld = (items: { accountId: string; contacts: unknown[] }[]) =>
      items.reduce((sum, item) => sum + CONTACTS - item.contacts.length, 0);
    expect(withheld(first)).toBe(5);

    // A suppression added between two pages applies to the next one (every account's second contact of this page).
    const second = await page(20, 20);
    expect(counts).toEqual({ builds: 2, checks: 40 * CONTACTS });
    expect(withheld(second)).toBe(5);
    await suppress(second.map((item) => testContacts(item.accountId)[1]!.email!));
    const again = await page(20, 20);
    expect(counts).toEqual({ builds: 3, checks: 60 * CONTACTS });
    expect(withheld(again)).toBe(5 + 20);
  });
});
