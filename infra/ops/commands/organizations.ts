/**
 * Organization, credit, capacity and API-key commands (decisions §8).
 */
import { defineCommand, integer } from '../command';
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
  examples: ['npx ops org:create --name "Acme" --smb-credits 10000 --research-credits 100 --max-enriching 5000'],
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
  examples: ['npx ops org:credits --org org_… --add 5000 --note "Q4 top-up"', 'npx ops org:credits --org org_… --add -50 --note "refund of an invoice error"'],
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
  examples: ['npx ops org:capacity --org org_… --max-enriching 10000', 'npx ops org:capacity --org org_… --external-enriching 250'],
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

/** `key:create`: prints `{"apiKey"}`. */
export const keyCreate = defineCommand<{ org: string }>({
  name: 'key:create',
  summary: 'another API key for an organization',
  examples: ['npx ops key:create --org org_…'],
  configure: (command) => command.requiredOption('--org <id>', 'organization ID'),
  run: async ({ options }) => {
    const { apiKeys } = await stores();
    return { apiKey: await apiKeys().create(options.org) };
  },
});

/** `key:revoke`: prints `{"revoked":true}`; fails (exit 1) for an unknown key. */
export const keyRevoke = defineCommand<{ key: string }>({
  name: 'key:revoke',
  summary: 'revoke an API key (takes effect on the next request; cannot be undone: --yes)',
  examples: ['npx ops key:revoke --key cek_… --yes'],
  confirm: ({ key }) => `Revoke the API key ${key.slice(0, 8)}…? Requests with it will be refused from the next one on.`,
  configure: (command) => command.requiredOption('--key <key>', 'the API key (cek_…)'),
  run: async ({ options }) => {
    const { apiKeys } = await stores();
    if (!(await apiKeys().revoke(options.key))) throw new Error('No such API key.');
    return { revoked: true };
  },
});
