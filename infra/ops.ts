/**
 * Operator CLI: `npm run ops -- <command> [options]` (decisions §8).
 *
 * With no flags it works against the running local stack (it reads
 * `.local/endpoints.json`, written by `npm start`). Against a deployed stack,
 * pass `--table NAME --bucket NAME` (or set TABLE_NAME and BUCKET_NAME) and
 * the usual AWS credentials. Prints one JSON object on stdout; on failure
 * prints a message on stderr and exits non-zero.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { applyLocalEnvironment, readLocalEndpoints } from './local/environment';

const USAGE = `Usage: npm run ops -- <command> [options]

  org:create --name N [--smb-credits N] [--research-credits N] [--max-enriching N]
  org:credits --org ID --add N [--note TEXT]
  org:capacity --org ID [--max-enriching N] [--external-enriching N]
  key:create --org ID
  key:revoke --key KEY
  warehouse:import FILE
  crm:import --org ID FILE
  campaign:import --org ID --via ui|data_cube --status draft|tam_only --name N FILE
  campaign:cancel --campaign ID
  credits:reconcile [--org ID]            (exit 1 when any balance differs from its ledger)
  credits:migrate                         (bring a table from before the complete ledger up to date; idempotent)

Target: the running local stack by default; a deployed stack with --table NAME --bucket NAME [--state-machine ARN].`;

/** Raised for a usage mistake: printed with the usage text. */
class UsageError extends Error {}

function integer(value: string | undefined, flag: string, { min = 0 }: { min?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be an integer${min === 0 ? ' >= 0' : ''}, got "${value}"`);
  return n;
}

function need<T>(value: T | undefined, flag: string): T {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required`);
  return value;
}

/** Lets `--add -5` mean `--add=-5` (parseArgs would read -5 as a flag). */
function joinNegativeNumbers(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (argv[i]!.startsWith('--') && !argv[i]!.includes('=') && next !== undefined && /^-\d+$/.test(next)) {
      out.push(`${argv[i]}=${next}`);
      i++;
    } else out.push(argv[i]!);
  }
  return out;
}

async function main(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: joinNegativeNumbers(argv),
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'smb-credits': { type: 'string' },
      'research-credits': { type: 'string' },
      'max-enriching': { type: 'string' },
      'external-enriching': { type: 'string' },
      org: { type: 'string' },
      add: { type: 'string' },
      note: { type: 'string' },
      key: { type: 'string' },
      via: { type: 'string' },
      status: { type: 'string' },
      campaign: { type: 'string' },
      table: { type: 'string' },
      bucket: { type: 'string' },
      'state-machine': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const [command, ...files] = positionals;
  if (values.help || !command) throw new UsageError(values.help ? '' : 'a command is required');

  // stdout carries exactly one JSON object: no EMF metric lines from the shared code.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  if (values.table || process.env.TABLE_NAME) {
    process.env.TABLE_NAME = values.table ?? process.env.TABLE_NAME;
    if (values.bucket) process.env.BUCKET_NAME = values.bucket;
    if (values['state-machine']) process.env.STATE_MACHINE_ARN = values['state-machine'];
  } else {
    const local = readLocalEndpoints();
    if (!local) throw new Error('No running local stack found (start it with `npm start`), and no --table given.');
    applyLocalEnvironment(local);
  }
  // Loaded after the environment is set: they build AWS clients.
  const { organizations } = await import('../lib/root');

  switch (command) {
    case 'org:create': {
      const { organization, apiKey } = await organizations().create({
        name: need(values.name, '--name'),
        smbCredits: integer(values['smb-credits'], '--smb-credits'),
        researchAgentCredits: integer(values['research-credits'], '--research-credits'),
        maxEnrichingAccounts: integer(values['max-enriching'], '--max-enriching'),
      });
      return { organizationId: organization.id, apiKey };
    }
    case 'org:credits': {
      const organizationId = need(values.org, '--org');
      const delta = need(integer(values.add, '--add', { min: Number.MIN_SAFE_INTEGER }), '--add');
      const { ledger } = await import('../lib/root');
      const { balance } = await ledger().adjust(organizationId, delta, values.note);
      return { organizationId, smb: balance };
    }
    case 'org:capacity': {
      const organizationId = need(values.org, '--org');
      const organization = await organizations().setCapacity(organizationId, {
        maxEnrichingAccounts: integer(values['max-enriching'], '--max-enriching'),
        externalEnrichingAccounts: integer(values['external-enriching'], '--external-enriching'),
      });
      return { enrichingAccounts: organization.enrichingAccounts, maxEnrichingAccounts: organization.maxEnrichingAccounts };
    }
    case 'key:create':
      return { apiKey: await organizations().createApiKey(need(values.org, '--org')) };
    case 'key:revoke': {
      const revoked = await organizations().revokeApiKey(need(values.key, '--key'));
      if (!revoked) throw new Error('No such API key.');
      return { revoked: true };
    }
    case 'campaign:import': {
      const via = need(values.via, '--via');
      const status = need(values.status, '--status');
      if (via !== 'ui' && via !== 'data_cube') throw new UsageError('--via must be ui or data_cube');
      if (status !== 'draft' && status !== 'tam_only') throw new UsageError('--status must be draft or tam_only');
      const { createCampaign } = await import('../lib/campaigns/use-cases');
      const { parseAccountIdsFile } = await import('../lib/campaigns/account-list');
      const { campaigns, accountLists } = await import('../lib/root');
      const accountIds = parseAccountIdsFile(await readFile(need(files[0], 'FILE'), 'utf8'));
      if (accountIds.length === 0) throw new UsageError('FILE has no account IDs');
      const campaign = await createCampaign(
        { campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() },
        { organizationId: need(values.org, '--org'), name: need(values.name, '--name'), accountIds, createdVia: via, status },
      );
      return { campaignId: campaign.id };
    }
    case 'warehouse:import': {
      const { importWarehouseFile } = await import('../lib/warehouse/import');
      const { embeddedWarehouse } = await import('../lib/root');
      return importWarehouseFile(embeddedWarehouse(), need(files[0], 'FILE'));
    }
    case 'crm:import': {
      const { accountHistory } = await import('../lib/root');
      const { parseAccountIdsFile } = await import('../lib/campaigns/account-list');
      const organizationId = need(values.org, '--org');
      if (!(await organizations().get(organizationId))) throw new Error(`No organization ${organizationId}.`);
      const accountIds = parseAccountIdsFile(await readFile(need(files[0], 'FILE'), 'utf8'));
      return { added: await accountHistory().addCrmTargets(organizationId, accountIds) };
    }
    case 'campaign:cancel': {
      const { cancelEnrichment } = await import('../lib/enrichment/cancel');
      const { campaigns, enrichment, workflow } = await import('../lib/root');
      return cancelEnrichment({ campaigns: campaigns(), enrichment: enrichment(), workflow: workflow() }, need(values.campaign, '--campaign'));
    }
    case 'credits:migrate': {
      const { migrateLedger } = await import('../lib/credits/migrate');
      const { ddb } = await import('../lib/aws');
      const { config } = await import('../lib/config');
      return migrateLedger({ client: ddb, tableName: config.tableName });
    }
    case 'credits:reconcile': {
      const { ledger } = await import('../lib/root');
      const { reconcileCredits } = await import('../lib/credits/reconcile');
      const report = await reconcileCredits(ledger(), values.org ? { organizationId: values.org } : {});
      if (report.drift.length > 0) {
        process.stderr.write(`error: ${report.drift.map((d) => `${d.organizationId}: balance ${d.balance} credits, ledger ${d.ledgerSum} credits (drift ${d.drift})`).join('; ')}\n`);
        process.exitCode = 1;
      }
      return report;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      if (error.message) process.stderr.write(`error: ${error.message}\n\n`);
      process.stderr.write(`${USAGE}\n`);
    } else {
      process.stderr.write(`error: ${(error as Error).message}\n`);
    }
    process.exitCode = 1;
  },
);
