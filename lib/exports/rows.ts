/**
 * The export file's bytes from result parts (docs/csv.md): the header, then
 * for every account of every part, in order, one row per kept contact or one
 * account-only row. The parts hold rows already neutralized and escaped
 * (lib/results/parts.ts), so this only filters contacts by their flags,
 * applies the cap and copies bytes into large chunks: no JSON, no per-row
 * string or array.
 */
import { ResultPartReader } from '../results/parts';
import { ACCOUNT_ONLY_CONTACT_CELLS, CSV_HEADER, encodeRowEnd } from '../results/csv';
import type { Delivery } from '../results/deliverable';

/** Size of the chunks handed to the upload (bytes): 1 MiB, a fifth of an upload part. */
export const CSV_CHUNK_BYTES = 1024 * 1024;

/** What an export wrote so far (docs/csv.md `rows`): accounts, rows that carry a contact, and data rows. */
export interface ExportCounts {
  accounts: number;
  contacts: number;
  /** Data rows (header excluded): contact rows plus account-only rows. */
  rows: number;
}

/** Below this many bytes a byte loop beats Buffer#copy (measured: 3× for the 26-byte row end). */
const SHORT_COPY_BYTES = 64;

/** Fills fixed-size chunks by copying byte ranges into them; full chunks wait in {@link ready}. */
class ChunkWriter {
  /** Full chunks not yet handed out. */
  ready: Buffer[] = [];
  private chunk: Buffer;
  private used = 0;

  constructor(private readonly size: number) {
    this.chunk = Buffer.allocUnsafe(size);
  }

  /** Appends `source[start, end)`. */
  put(source: Buffer, start: number, end: number): void {
    const room = this.size - this.used;
    const length = end - start;
    if (length <= room) {
      if (length < SHORT_COPY_BYTES) {
        // A short range (the row end, ~26 bytes) copies faster byte by byte than through Buffer#copy's call.
        const chunk = this.chunk;
        let at = this.used;
        for (let i = start; i < end; i++) chunk[at++] = source[i]!;
      } else {
        source.copy(this.chunk, this.used, start, end);
      }
      this.used += length;
      return;
    }
    source.copy(this.chunk, this.used, start, start + room);
    this.ready.push(this.chunk);
    this.chunk = Buffer.allocUnsafe(this.size);
    this.used = 0;
    this.put(source, start + room, end);
  }

  /** Appends all of `source`. */
  putAll(source: Buffer): void {
    this.put(source, 0, source.length);
  }

  /** The bytes written since the last full chunk (a view; the writer must not be used afterwards). */
  rest(): Buffer {
    return this.chunk.subarray(0, this.used);
  }
}

/**
 * The export file, as chunks of {@link CSV_CHUNK_BYTES} (the last one
 * shorter), from result parts in order. Chunks of a part are handed out once
 * the whole part is written, so memory holds at most one part's rows.
 *
 * @param parts - result parts (lib/results/parts.ts layout), in index order.
 * @param delivery - what may be delivered (lib/results/deliverable.ts: the export's filters, ORed, then the cap; the deployment's withholding).
 * @param enrichedAt - the campaign's `completedAt`, the last cell of every row.
 * @param counts - updated as rows are written; final once the generator is done.
 * @param deliverable - whether the reader's current contact may be delivered (lib/privacy/deliverable.ts); a contact it refuses is left out as if absent.
 * @throws ResultPartFormatError when a part is not of the current layout.
 */
export async function* csvChunks(
  parts: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  delivery: Delivery,
  enrichedAt: string,
  counts: ExportCounts,
  chunkBytes = CSV_CHUNK_BYTES,
  deliverable: (part: ResultPartReader) => boolean = () => true,
): AsyncGenerator<Buffer> {
  const out = new ChunkWriter(chunkBytes);
  const rowEnd = Buffer.from(encodeRowEnd(enrichedAt), 'utf8');
  const accountOnlyEnd = Buffer.from(ACCOUNT_ONLY_CONTACT_CELLS + encodeRowEnd(enrichedAt), 'utf8');
  out.putAll(Buffer.from(CSV_HEADER, 'utf8'));
  for await (const bytes of parts) {
    const part = new ResultPartReader(bytes);
    const source = part.bytes;
    while (part.nextAccount()) {
      let kept = 0;
      delivery.beginAccount();
      while (delivery.nextContact(part)) {
        out.put(source, part.accountStart, part.accountEnd);
        out.put(source, part.contactStart, part.contactEnd);
        out.putAll(rowEnd);
        kept++;
      }
      if (kept === 0) {
        out.put(source, part.accountStart, part.accountEnd);
        out.putAll(accountOnlyEnd);
      }
      counts.accounts++;
      counts.contacts += kept;
      counts.rows += Math.max(kept, 1);
    }
    const ready = out.ready;
    out.ready = [];
    yield* ready;
  }
  yield out.rest();
}
