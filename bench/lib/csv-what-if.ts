/**
 * A what-if for the export: how much of its CPU is CSV serialization, and
 * what a minimal RFC 4180 writer would cost instead. Both serialize the same
 * rows, built by the product's own `accountRows` (lib/exports/csv.ts), into
 * a sink, in this process.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { accountRows, CSV_COLUMNS } from '../../lib/exports/csv';
import type { EnrichedAccount } from '../../lib/enrichment/results';
import { benchAccount } from './fixtures';

const ENRICHED_AT = '2026-11-22T10:00:00.000Z';

/** A field quoted only when RFC 4180 needs it (quote, comma, CR, LF) or to keep edge whitespace, as the export's options do. */
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const field = (value: string) => (NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** Milliseconds to serialize the rows of `accounts` accounts × `contacts` contacts both ways. */
export async function csvWhatIf(accounts: number, contacts: number): Promise<{ rows: number; stringifyMs: number; minimalMs: number; rowsOnlyMs: number }> {
  const enriched: EnrichedAccount[] = Array.from({ length: accounts }, (_, i) => {
    const { status: _status, ...account } = benchAccount(`acc_${i}`, i, contacts);
    return account;
  });
  const selection = { hasEmail: false, hasMobilePhone: false };
  function* rows() {
    for (const account of enriched) yield* accountRows(account, selection, ENRICHED_AT).rows;
  }
  const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });

  let t = performance.now();
  let count = 0;
  for (const _row of rows()) count++;
  const rowsOnlyMs = performance.now() - t;

  t = performance.now();
  await pipeline(
    Readable.from(rows()),
    stringify({ bom: true, header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows', quoted_match: [/[\r\n]/, /^\s|\s$/] }),
    sink(),
  );
  const stringifyMs = performance.now() - t;

  t = performance.now();
  async function* text() {
    let chunk = `\uFEFF${CSV_COLUMNS.join(',')}\r\n`;
    for (const row of rows()) {
      chunk += `${row.map(field).join(',')}\r\n`;
      if (chunk.length >= 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk;
  }
  await pipeline(Readable.from(text()), sink());
  const minimalMs = performance.now() - t;
  return { rows: count, stringifyMs, minimalMs, rowsOnlyMs };
}
