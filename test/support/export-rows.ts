/**
 * The rows of one account as the export writes them, read back as cell
 * arrays: the account encoded as a result part (lib/results/parts.ts),
 * exported (lib/exports/rows.ts) and parsed by csv-parse. Lets rule tests
 * assert on cells while going through the real bytes.
 */
import { parse } from 'csv-parse/sync';
import { encodePart } from '../../lib/results/parts';
import type { EnrichedAccount } from '../../lib/results/csv';
import type { ContactSelection } from '../../lib/results/csv';
import { csvChunks, type ExportCounts } from '../../lib/exports/rows';
import { deliverable } from '../../lib/results/deliverable';

/** The CSV rows of one account, in CSV_COLUMNS order, and how many carry a contact. */
export async function accountRows(
  account: EnrichedAccount,
  selection: ContactSelection,
  enrichedAt: string,
): Promise<{ rows: string[][]; contacts: number }> {
  const counts: ExportCounts = { accounts: 0, contacts: 0, rows: 0 };
  const chunks: Buffer[] = [];
  for await (const chunk of csvChunks([encodePart([account])], deliverable(selection), enrichedAt, counts)) chunks.push(chunk);
  const [, ...rows] = parse(Buffer.concat(chunks), { bom: true, relaxColumnCount: false }) as string[][];
  return { rows, contacts: counts.contacts };
}
