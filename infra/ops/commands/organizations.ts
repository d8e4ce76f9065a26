/**
 * Organization, credit, capacity and API-key commands (README.md#operator-cli).
 */
import { randomUUID } from 'node:crypto';
import { defineCommand, integer, integerOrNone, noneAsNull, type NONE } from '../command';
import { organizationOf, stores, TEST_OPTION } from '../target';
import { LIMIT_MINIMUMS } from '../../../lib/organizations/limit-minimums';
import { OPERATOR_KEY_NAME } from '../../../lib/organizations/api-keys';
import { isScope, SCOPES, type Scope } from '../../../lib/http/scopes';

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
  /** Kept on the adjustment's ledger entry (README.md#operator-cli). */
  note?: string;
  /** Adjust the organization's test twin's test credits instead (docs/test-mode.md; the twin is created on first use). */
  test?: boolean;
  /** The adjustment's ID: the same ID twice adjusts once (issue #31); generated when absent. */
  id?: string;
}

/** An adjustment ID as `--id` takes it: 1..128 visible ASCII characters. */
const ADJUSTMENT_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;

/**
 * `org:credits`: prints `{"organizationId","smb","adjustmentId"}` (the new smb balance, and the adjustment's ID:
 * run it again with `--id` after a lost answer and it adjusts once; issue #31).
 */
export const orgCredits = defineCommand<OrgCreditsOptions>({
  name: 'org:credits',
  summary: 'adjust the smb credit balance (N may be negative; never below 0), with a ledger entry; the same --id adjusts once',
  examples: [
    'npx ops org:credits --org org_… --add 5000 --note "Q4 top-up"',
    'npx ops org:credits --org org_… --add -50 --id adj_2026_11_refund --note "refund of an invoice error"',
    'npx ops org:credits --org org_… --test --add 1000000',
  ],
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .requiredOption('--add <n>', 'credits to add; negative to take away (--add -50)', integer(-Infinity))
      .option('--note <text>', 'why, kept on the ledger entry of the adjustment')
      .option(
        '--id <adjustmentId>',
        'ID of this adjustment (1..128 visible ASCII characters; generated and printed when absent): a retry with the same ID adjusts once',
      )
      .option('--test', "adjust the test credits of the organization's test twin (created on first use)"),
  run: async ({ options }) => {
    if (options.id !== undefined && !ADJUSTMENT_ID_PATTERN.test(options.id))
      throw new Error('--id: 1..128 visible ASCII characters (no spaces)');
    const adjustmentId = options.id ?? `adj_${randomUUID()}`;
    const { ledger, operatorAuditItem } = await stores();
    const organizationId = await organizationOf(options);
    const { balance } = await ledger().adjust(organizationId, options.add, options.note, adjustmentId, [
      operatorAuditItem({ organizationId, command: 'org:credits', idempotencyKey: adjustmentId }),
    ]);
    return { organizationId: options.org, smb: balance, adjustmentId };
  },
});

/** Options of `org:capacity`. */
interface OrgCapacityOptions {
  org: string;
  maxEnriching?: number;
  externalEnriching?: number;
  test?: boolean;
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
      .option('--external-enriching <n>', 'accounts enriching through other surfaces (UI, data cube)', integer())
      .option('--test', "set the capacity of the organization's test twin (created on first use)"),
  run: async ({ options }) => {
    const { organizations, operatorAuditItem } = await stores();
    const organizationId = await organizationOf(options);
    const organization = await organizations().setCapacity(
      organizationId,
      { maxEnrichingAccounts: options.maxEnriching, externalEnrichingAccounts: options.externalEnriching },
      [operatorAuditItem({ organizationId, command: 'org:capacity' })],
    );
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
  /** Credits per UTC month; `none`: no limit. */
  monthlySpend?: number | typeof NONE;
  /** Credits; `none`: no threshold. */
  lowBalance?: number | typeof NONE;
  /** The limits of the organization's test twin instead. */
  test?: boolean;
}

/**
 * `org:limits` (docs/limits.md): sets the organization's overrides of the deployment's limits (none given: reads them) and
 * prints the limits in force, as `POST /v1/org/limits` answers them. API containers use a new request rate within a minute.
 */
export const orgLimits = defineCommand<OrgLimitsOptions>({
  name: 'org:limits',
  summary: "read or override an organization's limits (request rate, exports and uploads per hour, monthly spend, low-balance threshold)",
  examples: [
    'npx ops org:limits --org org_…',
    'npx ops org:limits --org org_… --requests 500 --window-seconds 10',
    'npx ops org:limits --org org_… --monthly-spend 50000 --low-balance 1000',
    'npx ops org:limits --org org_… --monthly-spend none',
    'npx ops org:limits --org org_… --test --low-balance 999000',
  ],
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .option('--requests <n>', 'authenticated requests per window (all keys together)', integer(LIMIT_MINIMUMS.requests))
      .option('--window-seconds <n>', 'length of the request window in seconds', integer(LIMIT_MINIMUMS.windowSeconds))
      .option('--exports-per-hour <n>', 'exports per hour', integer(LIMIT_MINIMUMS.exportsPerHour))
      .option('--uploads-per-hour <n>', 'uploads per hour', integer(LIMIT_MINIMUMS.uploadsPerHour))
      .option(
        '--monthly-spend <n|none>',
        'credits the organization may spend per UTC calendar month; none: no limit',
        integerOrNone(LIMIT_MINIMUMS.monthlySpendLimit),
      )
      .option(
        '--low-balance <n|none>',
        'smb balance under which a launch emits organization.credits_low; none: no threshold',
        integerOrNone(LIMIT_MINIMUMS.lowBalanceThreshold),
      )
      .option(...TEST_OPTION),
  run: async ({ options }) => {
    const { describeLimits, limitDependencies, limits, operatorAuditItem } = await stores();
    const organizationId = await organizationOf(options);
    await limits().setLimits(
      organizationId,
      {
        requests: options.requests,
        windowSeconds: options.windowSeconds,
        exportsPerHour: options.exportsPerHour,
        uploadsPerHour: options.uploadsPerHour,
        monthlySpendLimit: noneAsNull(options.monthlySpend),
        lowBalanceThreshold: noneAsNull(options.lowBalance),
      },
      // Read-only when nothing is given: no change, no entry (setLimits writes nothing then).
      [operatorAuditItem({ organizationId, command: 'org:limits' })],
    );
    return describeLimits(limitDependencies(), organizationId);
  },
});

/**
 * `key:create`: prints `{"apiKey"}`. With `--test`, a test key (`cek_test_…`)
 * of the organization's test twin, created with its test credits on first
 * use (docs/test-mode.md).
 */
export const keyCreate = defineCommand<{ org: string; test?: boolean; scopes?: string; name?: string }>({
  name: 'key:create',
  summary: 'another API key for an organization (--test: a test key of its test twin; --scopes: only those, default every scope)',
  examples: [
    'npx ops key:create --org org_…',
    'npx ops key:create --org org_… --test',
    'npx ops key:create --org org_… --scopes campaigns:read,results:read --name "CRM sync"',
  ],
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .option('--test', "a test key (cek_test_…), acting on the organization's test twin")
      .option('--scopes <list>', `comma-separated scopes the key holds (${SCOPES.join(', ')}); default: every scope`)
      .option('--name <name>', `what the key is for (1..100 characters; default "${OPERATOR_KEY_NAME}")`),
  run: async ({ options }) => {
    const scopes = options.scopes === undefined ? undefined : parseScopes(options.scopes);
    if (options.name !== undefined && (options.name.length < 1 || options.name.length > 100)) throw new Error('--name: 1..100 characters.');
    const { apiKeys, operatorAuditItem } = await stores();
    const organizationId = await organizationOf(options);
    const { secret } = await apiKeys().issue(
      organizationId,
      { ...(scopes ? { scopes } : {}), ...(options.name !== undefined ? { name: options.name } : {}) },
      new Date(),
      [operatorAuditItem({ organizationId, command: 'key:create' })],
    );
    return { apiKey: secret };
  },
});

/** `--scopes a,b`: the scopes named, each one of SCOPES. @throws Error naming the first unknown scope, or an empty list. */
function parseScopes(list: string): Scope[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new Error(`--scopes: name at least one of ${SCOPES.join(', ')}.`);
  const unknown = names.find((name) => !isScope(name));
  if (unknown !== undefined) throw new Error(`--scopes: unknown scope "${unknown}"; the scopes are ${SCOPES.join(', ')}.`);
  return names as Scope[];
}

/** `key:list`: prints `{"keys":[…]}`, every key of the organization (as keys/list shows them, never a secret). */
export const keyList = defineCommand<{ org: string; test?: boolean }>({
  name: 'key:list',
  summary: "an organization's API keys (--test: its test twin's), as keys/list shows them",
  examples: ['npx ops key:list --org org_…'],
  configure: (command) => command.requiredOption('--org <id>', 'organization ID').option('--test', "the test twin's keys"),
  run: async ({ options }) => {
    const { apiKeys } = await stores();
    const organizationId = await organizationOf(options);
    const all = [];
    let after: string | undefined;
    do {
      const page = await apiKeys().page(organizationId, 100, after);
      all.push(...page.keys);
      after = page.next;
    } while (after !== undefined);
    return { keys: all };
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
    const { apiKeys, operatorAuditItem } = await stores();
    if (!(await apiKeys().revoke(options.key, (organizationId) => operatorAuditItem({ organizationId, command: 'key:revoke' }))))
      throw new Error('No such API key.');
    return { revoked: true };
  },
});
