/**
 * Reading a result's parts in order with a few downloading ahead, into reused buffers: the reader the results
 * page, the stream and the export share (docs/data-model.md). Its own module, apart from the export, so the
 * results page and stream do not carry the export's multipart upload (`@aws-sdk/lib-storage`, whose class
 * esbuild keeps even unused: about 10 KB parsed at every cold start).
 */
import type { ResultStore } from '../results/parts';

/**
 * Result parts the results page and stream read ahead of the one being consumed, into reused buffers: one (each a
 * batch's, ~6 MB for 1,000 accounts × 10 contacts). The stream's answer, not the reads, sets its pace: in AWS a
 * streamed response past its first 6 MB is bandwidth-capped (AWS Lambda docs, "Bandwidth limits for response
 * streaming"), far below one part read a time. Each part held ahead is one more ~6 MB buffer, and the garbage of its
 * read (the socket's 64 KB chunks) in flight at once (bench `npm run bench:stream`, 100,000 accounts against 10,000:
 * peak RSS 148 / 132 MiB with 3 ahead, 107 / 98 MiB with 1).
 */
export const PREFETCH_PARTS = 1;

/**
 * The bytes of every part under a prefix, in index order, with up to `ahead`
 * later parts downloading while the current one is consumed. A read that
 * fails surfaces when its part's turn comes (reads started ahead never
 * reject unobserved).
 *
 * With `reuse`, the parts are read into `ahead + 1` buffers used in turn
 * (each grown to the largest part it held), so reading a whole result
 * allocates the same few buffers whatever its size (the results stream:
 * bench `results`, its peak memory flat). A part's bytes are then valid only
 * until the consumer asks for the next part: a consumer copies what it keeps
 * (the JSON texts do; the export's CSV chunks copy the bytes they keep).
 * The stream and the export both reuse (the export reads `EXPORT_PREFETCH_PARTS` ahead, lib/exports/export.ts).
 */
export async function* prefetchedParts(
  results: Pick<ResultStore, 'readPart'>,
  keys: readonly string[],
  ahead = PREFETCH_PARTS,
  reuse = false,
): AsyncGenerator<Uint8Array> {
  const queue: Promise<Uint8Array>[] = [];
  // In use at once: the part handed out and the `ahead` after it (no more than there are parts: a page of one part
  // takes one buffer); read k reuses the buffer of read k - (ahead + 1), which the consumer left when it asked for
  // read k - ahead (the one that started read k). Taken from the process's spare buffers and given back when the
  // reading ends, so the next request reads into them too.
  const buffers: Buffer[] = reuse ? Array.from({ length: Math.min(ahead + 1, Math.max(1, keys.length)) }, takeSparePartBuffer) : [];
  // Grown with an eighth to spare, so parts of about one size do not grow a buffer again and again.
  const bufferOf = (slot: number) => (bytes: number) => {
    if (buffers[slot]!.length < bytes) buffers[slot] = Buffer.allocUnsafeSlow(bytes + (bytes >>> 3));
    return buffers[slot]!;
  };
  let next = 0;
  const fill = (limit: number) => {
    while (next < keys.length && queue.length < limit) {
      const key = keys[next]!;
      const read = reuse ? results.readPart(key, bufferOf(next % buffers.length)) : results.readPart(key);
      next++;
      read.catch(() => undefined);
      queue.push(read);
    }
  };
  try {
    fill(ahead + 1); // the first part and `ahead` after it
    while (queue.length > 0) {
      const bytes = await queue.shift()!;
      fill(ahead); // `ahead` parts after the one handed out
      yield bytes;
    }
  } finally {
    // Reads still running (the consumer stopped early) write into their buffers: those are left to them.
    if (reuse && queue.length === 0) for (const buffer of buffers) giveBackPartBuffer(buffer);
  }
}

/**
 * Part buffers a finished reader left for the next one in this process (the
 * results page and stream: a page then reads into a buffer already
 * allocated, as a bare GetObject into a reused buffer does), largest first,
 * at most {@link SPARE_PART_BYTES_KEPT} bytes in all: kept by bytes, not by
 * count, so what a container holds between requests stays bounded whatever
 * the parts' size (two parts of 1,000 accounts × 10 contacts, ~7 MB each).
 */
const SPARE_PART_BUFFERS: Buffer[] = [];
/** Bytes of spare part buffers a process keeps between readers (see {@link SPARE_PART_BUFFERS}). */
export const SPARE_PART_BYTES_KEPT = 16 * 1024 * 1024;

/** A spare part buffer (the largest kept), or an empty one that the first part read into it replaces. */
const takeSparePartBuffer = (): Buffer => SPARE_PART_BUFFERS.shift() ?? Buffer.alloc(0);

/** Keeps `buffer` for the next reader when it fits in {@link SPARE_PART_BYTES_KEPT} with the ones kept; drops it otherwise. */
function giveBackPartBuffer(buffer: Buffer): void {
  if (buffer.length === 0) return;
  SPARE_PART_BUFFERS.push(buffer);
  SPARE_PART_BUFFERS.sort((a, b) => b.length - a.length);
  let bytes = 0;
  const kept = SPARE_PART_BUFFERS.findIndex((spare) => (bytes += spare.length) > SPARE_PART_BYTES_KEPT);
  if (kept >= 0) SPARE_PART_BUFFERS.length = kept;
}

/** The spare part buffers this process keeps now: how many and their bytes (tests: the bound holds). */
export function sparePartBuffers(): { count: number; bytes: number } {
  return { count: SPARE_PART_BUFFERS.length, bytes: SPARE_PART_BUFFERS.reduce((sum, buffer) => sum + buffer.length, 0) };
}
