/**
 * Organization, credit, capacity and API-key commands (decisions §8).
 */
import { defineCommand, integer, integerOrNone } from '../command';
import { stores } from '../target';

/** Options of `org:create`. */
interface OrgCreateOptions {
  name: string;
  smbCredits?: number;
  researchCredits?: number;
  maxEnriching?: number;
}

/** `org:create`: prints `{"organizationId","apiKey"}`. */
export const orgCreate = defineCommand<OrgCreateOptions>({
  name: 'org:create',
  summary: 'a new organization and its first API key',
  configure: (command) =>
    command
      .requiredOption('--name <name>', 'organization name')
      .option('--smb-credits <n>', 'starting smb credit balance (default 0)', integer())
      .option('--research-credits <n>', 'starting research-agent credit balance (default 0)', integer())
      .option('--max-enriching <n>', 'ceiling of accounts enriching at once', integer()),
  run: async ({ options }) => {
    const { organizations } = await stores();
    const { organization, apiKey } = await organizations().create({
      name: options.name,
      smbCredits: options.smbCredits,
      researchAgentCredits: options.researchCredits,
      maxEnrichingAccounts: options.maxEnriching,
    });
    return { organizationId: organization.id, apiKey };
  },
});

/** Options of `org:credits`. */
export interface OrgCreditsOptions {
  org: string;
  /** Credits to add; negative takes credits away (never below 0). */
  add: number;
  /** Kept on the adjustment's ledger entry (decisions §8). */
  note?: string;
}

/** `org:credits`: prints `{"organizationId","smb"}` (the new smb balance). */
export const orgCredits = defineCommand<OrgCreditsOptions>({
  name: 'org:credits',
  summary: 'adjust the smb credit balance (N may be negative; never below 0), with a ledger entry',
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .requiredOption('--add <n>', 'credits to add; negative to take away (--add -50)', integer(-Infinity))
      .option('--note <text>', 'why, kept on the ledger entry of the adjustment'),
  run: async ({ options }) => {
    const { ledger } = await stores();
    const { balance } = await ledger().adjust(options.org, options.add, options.note);
    return { organizationId: options.org, smb: balance };
  },
});

/** Options of `org:capacity`. */
interface OrgCapacityOptions {
  org: string;
  maxEnriching?: number;
  externalEnriching?: number;
}

/** `org:capacity`: prints the organization's `{"enrichingAccounts","maxEnrichingAccounts"}`. */
export const orgCapacity = defineCommand<OrgCapacityOptions>({
  name: 'org:capacity',
  summary: 'set the enrichment ceiling; set accounts enriching through other surfaces',
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .option('--max-enriching <n>', 'ceiling of accounts enriching at once', integer())
      .option('--external-enriching <n>', 'accounts enriching through other surfaces (UI, data cube)', integer()),
  run: async ({ options }) => {
    const { organizations } = await stores();
    const organization = await organizations().setCapacity(options.org, {
      maxEnrichingAccounts: options.maxEnriching,
      externalEnrichingAccounts: options.externalEnriching,
    });
    return { enrichingAccounts: organization.enrichingAccounts, maxEnrichingAccounts: organization.maxEnrichingAccounts };
  },
});

/** Options of `org:limits`. */
interface OrgLimitsOptions {
  org: string;
  requests?: number;
  windowSeconds?: number;
  exportsPerHour?: number;
  uploadsPerHour?: number;
  /** Credits per UTC month; `null` (`none`): no limit. */
  monthlySpend?: number | null;
  /** Credits; `null` (`none`): no threshold. */
  lowBalance?: number | null;
}

/**
 * `org:limits` (decisions §15): sets the organization's overrides of the deployment's limits (none given: reads them) and
 * prints the limits in force, as `POST /v1/org/limits` answers them. API containers use a new request rate within a minute.
 */
export const orgLimits = defineCommand<OrgLimitsOptions>({
  name: 'org:limits',
  summary: "read or override an organization's limits (request rate, exports and uploads per hour, monthly spend, low-balance threshold)",
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .option('--requests <n>', 'authenticated requests per window (all keys together)', integer(1))
      .option('--window-seconds <n>', 'length of the request window in seconds', integer(1))
      .option('--exports-per-hour <n>', 'exports per hour', integer(1))
      .option('--uploads-per-hour <n>', 'uploads per hour', integer(1))
      .option('--monthly-spend <n|none>', 'credits the organization may spend per UTC calendar month; none: no limit', integerOrNone())
      .option('--low-balance <n|none>', 'smb balance under which a launch emits organization.credits_low; none: no threshold', integerOrNone()),
  run: async ({ options }) => {
    const { describeLimits, limitDependencies, limits } = await stores();
    await limits().setLimits(options.org, {
      requests: options.requests,
      windowSeconds: options.windowSeconds,
      exportsPerHour: options.exportsPerHour,
      uploadsPerHour: options.uploadsPerHour,
      monthlySpendLimit: options.monthlySpend,
      lowBalanceThreshold: options.lowBalance,
    });
    return describeLimits(limitDependencies(), options.org);
  },
});

/** `key:create`: prints `{"apiKey"}`. */
export const keyCreate = defineCommand<{ org: string }>({
  name: 'key:create',
  summary: 'another API key for an organization',
  configure: (command) => command.requiredOption('--org <id>', 'organization ID'),
  run: async ({ options }) => {
    const { apiKeys } = await stores();
    return { apiKey: await apiKeys().create(options.org) };
  },
});

/** `key:revoke`: prints `{"revoked":true}`; fails (exit 1) for an unknown key. */
export const keyRevoke = defineCommand<{ key: string }>({
  name: 'key:revoke',
  summary: 'revoke an API key (takes effect on the next request)',
  configure: (command) => command.requiredOption('--key <key>', 'the API key (cek_…)'),
  run: async ({ options }) => {
    const { apiKeys } = await stores();
    if (!(await apiKeys().revoke(options.key))) throw new Error('No such API key.');
    return { revoked: true };
  },
});
