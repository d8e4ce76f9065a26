/**
 * Reading a whole result for the results page and stream reuses a few
 * buffers (lib/exports/prefetch.ts `prefetchedParts` with `reuse`,
 * lib/results/parts.ts `readPart` into a given buffer):
 * against the S3 endpoint, every part arrives byte for byte as written, in
 * order, while the parts share `ahead + 1` buffers whatever their number, so
 * the stream's and the export's memory does not grow with the result; and
 * what a process keeps between readers is bounded by bytes.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PREFETCH_PARTS, prefetchedParts, SPARE_PART_BYTES_KEPT, sparePartBuffers } from '../lib/exports/prefetch';
import { encodePart, resultsPrefix } from '../lib/results/parts';
import { results } from '../lib/root';
import type { EnrichedAccount } from '../lib/results/csv';
import { blankContact } from '../lib/warehouse/schema';
import { useApi } from './support/api';

useApi();

/** Part `index`: sizes differ, the first four the largest (so each buffer is sized by the first part it holds). */
const batch = (index: number): EnrichedAccount[] =>
  Array.from({ length: index < 4 ? 30 - index : 5 + ((index * 7) % 11) }, (_, a) => ({
    accountId: `acc_${index}_${a}`,
    name: `Company ${index}-${a}`,
    domain: null,
    industry: null,
    employeeCount: a,
    country: 'DE',
    contacts: Array.from({ length: a % 4 }, (_, c) => ({
      ...blankContact(`ct_${index}_${a}_${c}`),
      email: `p${index}.${a}.${c}@x.example`,
    })),
  }));

describe('prefetchedParts', () => {
  it('hands out every part as written, in order, reading them into ahead + 1 buffers used in turn', async () => {
    const prefix = resultsPrefix(`org_${randomUUID()}`, `camp_${randomUUID()}`, 'att_prefetch');
    const parts = 14;
    await Promise.all(Array.from({ length: parts }, (_, index) => results().putPart(prefix, index, batch(index))));
    const keys = await results().listParts(prefix);
    expect(keys).toHaveLength(parts);
    const buffers = new Set<ArrayBufferLike>();
    let index = 0;
    for await (const bytes of prefetchedParts(results(), keys, 3, true)) {
      // Compared before asking for the next part: the bytes are valid until then.
      expect(Buffer.from(bytes).equals(encodePart(batch(index))), `part ${index}`).toBe(true);
      buffers.add(bytes.buffer);
      index++;
    }
    expect(index).toBe(parts);
    // 14 parts of different sizes read into 4 buffers.
    expect(buffers.size).toBe(4);
  });

  it('reads a one-part page into one buffer, and keeps at most SPARE_PART_BYTES_KEPT bytes of spare buffers after readers of any size', async () => {
    const prefix = resultsPrefix(`org_${randomUUID()}`, `camp_${randomUUID()}`, 'att_spare');
    const parts = 12;
    await Promise.all(Array.from({ length: parts }, (_, index) => results().putPart(prefix, index, batch(index))));
    const keys = await results().listParts(prefix);
    // A page of one part: its one read and nothing else taken from the spare buffers.
    const before = sparePartBuffers();
    let read = 0;
    const counting = {
      readPart: (key: string, into?: (bytes: number) => Buffer) => {
        read++;
        return results().readPart(key, into);
      },
    };
    for await (const bytes of prefetchedParts(counting, keys.slice(0, 1), 3, true)) expect(bytes.length).toBeGreaterThan(0);
    expect(read).toBe(1);
    expect(sparePartBuffers().count).toBeLessThanOrEqual(Math.max(before.count, 1));
    // Readers of every size, one after another and two at once: the spare buffers stay within the byte bound.
    for (const ahead of [0, 1, 3, 7]) {
      const readers = [prefetchedParts(results(), keys, ahead, true), prefetchedParts(results(), keys.slice(3), ahead, true)];
      await Promise.all(
        readers.map(async (reader) => {
          for await (const _ of reader);
        }),
      );
      const spare = sparePartBuffers();
      expect(spare.bytes).toBeLessThanOrEqual(SPARE_PART_BYTES_KEPT);
      expect(spare.count).toBeGreaterThan(0);
    }
  });

  it(`reads a result of 40 parts into as many buffers as one of 4: the page's and stream's read-ahead (${PREFETCH_PARTS}) plus one`, async () => {
    const prefix = resultsPrefix(`org_${randomUUID()}`, `camp_${randomUUID()}`, 'att_flat');
    await Promise.all(Array.from({ length: 40 }, (_, index) => results().putPart(prefix, index, batch(index))));
    const keys = await results().listParts(prefix);
    const used: number[] = [];
    for (const count of [4, 40]) {
      // Every buffer a read was given (reused or new), and every part's bytes as written.
      const given = new Set<Buffer>();
      const counting = {
        readPart: (key: string, into?: (bytes: number) => Buffer) =>
          results().readPart(
            key,
            into &&
              ((bytes: number) => {
                const buffer = into(bytes);
                given.add(buffer);
                return buffer;
              }),
          ),
      };
      let index = 0;
      for await (const bytes of prefetchedParts(counting, keys.slice(0, count), undefined, true)) {
        expect(Buffer.from(bytes).equals(encodePart(batch(index))), `part ${index}`).toBe(true);
        index++;
      }
      expect(index).toBe(count);
      used.push(given.size);
    }
    // Sized by the largest parts (the first four), so ten times the parts grow no buffer again.
    expect(used).toEqual([PREFETCH_PARTS + 1, PREFETCH_PARTS + 1]);
  });
});
