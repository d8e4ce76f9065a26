/**
 * `migrate`: runs the data migrations (lib/migrations) against the target
 * table, in their one order, each once (docs/architecture.md). `npm start` runs the
 * same list on its data folder; after a deploy, operators run it against the
 * deployed table.
 */
import { defineCommand } from '../command';

/** `migrate [--force]`: prints `{"ran":[{"id","changed"}],"skipped":[ids]}`. */
export const migrate = defineCommand<{ force?: boolean }>({
  name: 'migrate',
  examples: ['npx ops migrate', 'npx ops migrate --table campaign-enrichment-prod --bucket campaign-enrichment-prod-data'],
  summary: 'bring the table up to date: run every data migration not yet recorded on it, in order (idempotent)',
  details:
    'Prints {"ran":[{id,changed}],"skipped":[ids]}. Each migration is idempotent; --force runs them all again (after a rollback, say).',
  configure: (command) => command.option('--force', 'run every migration, even those recorded as run'),
  run: async ({ options }) => {
    const { runMigrations } = await import('../../../lib/migrations');
    const { ddb, s3 } = await import('../../../lib/aws');
    const { config } = await import('../../../lib/config');
    const { accountHistory } = await import('../../../lib/root');
    return {
      ...(await runMigrations(
        { client: ddb, tableName: config.tableName, history: accountHistory(), s3: s3(), bucketName: config.bucketName },
        { force: options.force === true },
      )),
    };
  },
});
