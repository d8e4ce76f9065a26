/**
 * File imports (README.md#operator-cli): warehouse accounts, CRM targets and
 * campaigns as other surfaces create them. Each validates the whole file
 * before its first write: a bad line writes nothing, and the error names
 * the file and the line. `--dry-run` validates and counts without writing.
 */
import { readFile } from 'node:fs/promises';
import { Option } from 'commander';
import { CREATED_VIA } from '../../../lib/campaigns/schema';
import { AccountIdSchema } from '../../../lib/account-lists/schema';
import { InvalidRequestError } from '../../../lib/errors';
import { formatIssues } from '../../../lib/http/issues';
import { BadLines, ImportFileError } from '../../../lib/warehouse/import';
import { defineCommand, readableFile, type ProgressReporter } from '../command';
import { organizationOf, stores, TEST_OPTION } from '../target';

/** IDs of CRM targets written per round (one progress step). */
const CRM_CHUNK = 1_000;

const dryRunOption = () => new Option('--dry-run', 'validate and count the file; write nothing');

/**
 * Reads an account-ID file (CSV or text: first column, one ID a line, an
 * optional `account_id`/`id` header) and validates every ID as a campaign
 * takes it (1 to 128 characters, no control characters).
 * @returns the IDs in file order (duplicates kept).
 * @throws UsageError for a file that cannot be read; ImportFileError naming the bad lines (up to a cap), or the first line CSV cannot read.
 */
async function readAccountIdFile(file: string): Promise<string[]> {
  await readableFile(file);
  let rows;
  try {
    const { parseAccountIdRows } = await import('../../../lib/account-lists/account-list');
    rows = parseAccountIdRows(await readFile(file, 'utf8'));
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    const problem = String((error.details?.issues as string[] | undefined)?.[0] ?? error.message).replace(/^accountIdsFile: /, '');
    throw new ImportFileError(file, { line: Number(/\bline (\d+)/.exec(problem)?.[1] ?? 1), problem: `not readable as CSV: ${problem}` });
  }
  const bad = new BadLines(file);
  for (const { id, line } of rows) {
    const parsed = AccountIdSchema.safeParse(id);
    if (!parsed.success)
      bad.add(
        line,
        formatIssues(parsed.error.issues)
          .map((issue) => `account ID ${JSON.stringify(id)}: ${issue.replace(/^body: /, '')}`)
          .join('; '),
      );
  }
  bad.check();
  return rows.map((row) => row.id);
}

const distinct = (ids: readonly string[]) => [...new Set(ids)];

/** Progress callback of the warehouse import, drawn as a bar per phase. */
function warehouseProgress(progress: ProgressReporter) {
  let phase: string | undefined;
  return ({ phase: current, done, total }: { phase: 'validate' | 'write'; done: number; total: number }) => {
    if (current !== phase) {
      phase = current;
      progress.start(current === 'validate' ? 'validating' : 'writing', total, current === 'validate' ? 'bytes' : 'accounts');
    }
    progress.update(done);
  };
}

/** `warehouse:import FILE [--dry-run]`: prints `{"accounts","contacts"}` (and `"dryRun":true`). */
export const warehouseImport = defineCommand<{ dryRun?: boolean }>({
  name: 'warehouse:import',
  examples: ['npx ops warehouse:import --dry-run accounts.jsonl', 'npx ops warehouse:import accounts.jsonl'],
  summary: 'upsert warehouse accounts and their contacts (JSON lines, README.md#operator-cli)',
  details: `FILE has one account per line:
  {"accountId":"acc_1","name":"Acme","domain":"acme.com","status":"active","contacts":[{"contactId":"ct_1","email":"ada@acme.com"}]}
status is active, closed or inactive; every contact field but contactId may be null or absent.
The whole file is validated first: a bad line writes nothing and the error names it (exit 3).`,
  configure: (command) => command.argument('<file>', 'JSON-lines file of accounts').addOption(dryRunOption()),
  run: async ({ args, options, progress }) => {
    const { importWarehouseFile, validateWarehouseFile } = await import('../../../lib/warehouse/import');
    await readableFile(args[0]!);
    const onProgress = warehouseProgress(progress);
    try {
      if (options.dryRun) return { ...(await validateWarehouseFile(args[0]!, onProgress)), dryRun: true };
      const { embeddedWarehouse } = await stores();
      return { ...(await importWarehouseFile(embeddedWarehouse(), args[0]!, { onProgress })) };
    } finally {
      progress.stop();
    }
  },
});

/** `crm:import --org ID FILE [--dry-run]`: prints `{"added"}` (distinct IDs; and `"dryRun":true`). */
export const crmImport = defineCommand<{ org: string; dryRun?: boolean; test?: boolean }>({
  name: 'crm:import',
  examples: ['npx ops crm:import --org org_… crm-targets.csv'],
  summary: 'add CRM targets to an organization (one account ID a line); launches exclude them',
  details:
    'FILE is text or CSV: first column, one account ID a line, an optional header row account_id or id.\nThe whole file is validated first: a bad line writes nothing and the error names it (exit 3).',
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .argument('<file>', 'file of account IDs')
      .addOption(dryRunOption())
      .option(...TEST_OPTION),
  run: async ({ args, options, progress }) => {
    const accountIds = distinct(await readAccountIdFile(args[0]!));
    const { organizations, accountHistory } = await stores();
    if (!(await organizations().get(options.org))) throw new Error(`No organization ${options.org}.`);
    const organizationId = await organizationOf(options);
    if (options.dryRun) return { added: accountIds.length, dryRun: true };
    progress.start('writing', accountIds.length, 'account IDs');
    try {
      for (let i = 0; i < accountIds.length; i += CRM_CHUNK) {
        await accountHistory().addCrmTargets(organizationId, accountIds.slice(i, i + CRM_CHUNK));
        progress.update(Math.min(i + CRM_CHUNK, accountIds.length));
      }
    } finally {
      progress.stop();
    }
    return { added: accountIds.length };
  },
});

/** Options of `campaign:import`. */
interface CampaignImportOptions {
  org: string;
  via: 'ui' | 'data_cube';
  status: 'draft' | 'tam_only';
  name: string;
  /** Into the organization's test twin (docs/test-mode.md; created on first use). */
  test?: boolean;
}

/** `campaign:import`: prints `{"campaignId"}`. */
export const campaignImport = defineCommand<CampaignImportOptions>({
  name: 'campaign:import',
  examples: ['npx ops campaign:import --org org_… --via ui --status draft --name "Q4 from the UI" accounts.csv'],
  summary: 'a campaign as another surface (UI, data cube) would create it',
  details: 'FILE is text or CSV: first column, one account ID a line, an optional header row account_id or id.',
  configure: (command) =>
    command
      .requiredOption('--org <id>', 'organization ID')
      .addOption(
        new Option('--via <surface>', 'surface that created it').choices(CREATED_VIA.filter((via) => via !== 'api')).makeOptionMandatory(),
      )
      .addOption(new Option('--status <status>', 'status it starts in').choices(['draft', 'tam_only']).makeOptionMandatory())
      .requiredOption('--name <name>', 'campaign name')
      .option(...TEST_OPTION)
      .argument('<file>', 'file of account IDs'),
  run: async ({ args, options }) => {
    const accountIds = await readAccountIdFile(args[0]!);
    if (accountIds.length === 0) throw new ImportFileError(args[0]!, { line: 1, problem: 'no account IDs' });
    const { createCampaign } = await import('../../../lib/campaigns/use-cases');
    const { campaigns, organizations, accountLists } = await stores();
    const organizationId = await organizationOf(options);
    const campaign = await createCampaign(
      { campaigns: campaigns(), organizations: organizations(), accountLists: accountLists() },
      { organizationId, name: options.name, accountIds, createdVia: options.via, status: options.status },
    );
    return { campaignId: campaign.id };
  },
});
