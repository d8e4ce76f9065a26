/**
 * Where CPU time goes: V8 CPU profiles (from `--cpu-prof` in a child, or
 * from the inspector in this process) summarized as self time by package or
 * project folder. Frames of a bundle are mapped back to their sources with
 * the bundle's source map (node:module SourceMap).
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const ROOT = `${path.resolve(import.meta.dirname, '../..')}/`;

/** The parts of a V8 CPU profile read here. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Package or project folder of a source path: `zod`, `@aws-sdk/client-s3`, `lib/exports`, `node:internal`. */
export function ownerOf(source: string): string {
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (nm) return nm[1]!;
  if (source.startsWith('node:')) return source.split('/')[0]!;
  const relative = source.startsWith(ROOT) ? source.slice(ROOT.length) : source.replace(/^(\.\.\/)+/, '');
  const own = /^(lib\/[^/]+(?=\/)|infra\/[^/]+(?=\/)|bench\/[^/]+(?=\/)|functions|lib|infra|bench)/.exec(relative);
  if (own) return own[1]!;
  return source || '(native)';
}

/** A profile summarized: self time (ms) by owner and by source line, largest first. */
export interface ProfileSummary {
  totalMs: number;
  byOwner: Array<[string, number]>;
  /** `lib/results/csv.ts:71 neutralizeCell` → ms. */
  byFrame: Array<[string, number]>;
}

const shortSource = (source: string) => {
  const relative = source.startsWith(ROOT) ? source.slice(ROOT.length) : source.replace(/^(\.\.\/)+/, '');
  return relative.replace(/^.*node_modules\//, '');
};

/** Self time by owner and by source line, with the total profiled time. */
export function summarizeProfile(profile: CpuProfile, maps: Record<string, string> = {}): ProfileSummary {
  const sourceMaps = new Map<string, SourceMap>();
  for (const [url, mapFile] of Object.entries(maps)) sourceMaps.set(url, new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))));
  const ownerOfNode = new Map<number, string>();
  const frameOfNode = new Map<number, string>();
  for (const node of profile.nodes) {
    const { url, functionName, lineNumber, columnNumber } = node.callFrame;
    let owner: string;
    let frame: string;
    if (!url) {
      owner = functionName.startsWith('(') ? functionName : '(native)';
      frame = functionName || owner;
    } else if (sourceMaps.has(url)) {
      const entry = sourceMaps.get(url)!.findEntry(lineNumber, columnNumber) as {
        originalSource?: string;
        originalLine?: number;
        name?: string;
      };
      owner = entry.originalSource ? ownerOf(entry.originalSource) : '(bundle, unmapped)';
      frame = entry.originalSource ? `${shortSource(entry.originalSource)}:${(entry.originalLine ?? 0) + 1}` : owner;
    } else {
      const file = url.startsWith('file://') ? fileURLToPath(url) : url;
      owner = ownerOf(file);
      frame = `${shortSource(file)}:${lineNumber + 1} ${functionName}`.trim();
    }
    ownerOfNode.set(node.id, owner);
    frameOfNode.set(node.id, frame);
  }
  const totals = new Map<string, number>();
  const frames = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const owner = ownerOfNode.get(id) ?? '(unknown)';
    const frame = frameOfNode.get(id) ?? '(unknown)';
    totals.set(owner, (totals.get(owner) ?? 0) + ms);
    frames.set(frame, (frames.get(frame) ?? 0) + ms);
  });
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return { totalMs: (profile.endTime - profile.startTime) / 1000, byOwner: sorted(totals), byFrame: sorted(frames) };
}

/** Summaries of several profiles of the same work (profiled in stretches) added up: self times and totals summed. */
export function addSummaries(summaries: readonly ProfileSummary[]): ProfileSummary {
  const add = (pick: (summary: ProfileSummary) => Array<[string, number]>) => {
    const sums = new Map<string, number>();
    for (const summary of summaries) for (const [key, ms] of pick(summary)) sums.set(key, (sums.get(key) ?? 0) + ms);
    return [...sums].sort((a, b) => b[1] - a[1]);
  };
  return {
    totalMs: summaries.reduce((sum, summary) => sum + summary.totalMs, 0),
    byOwner: add((summary) => summary.byOwner),
    byFrame: add((summary) => summary.byFrame),
  };
}

/** The heaviest source lines (self time), e.g. `csv-stringify/lib/api/index.js:120 1,234 ms`. */
export function formatTopFrames(summary: ProfileSummary, n = 8): string {
  return summary.byFrame
    .filter(([frame]) => !frame.startsWith('(idle)') && !frame.startsWith('(program)'))
    .slice(0, n)
    .map(([frame, ms]) => `${frame} ${Math.round(ms).toLocaleString('en-US')} ms`)
    .join(', ');
}

/** Formats the top owners as `zod 1,234 ms (12 %), …` of the non-idle time. */
export function formatTop(summary: Pick<ProfileSummary, 'byOwner'>, n = 10): string {
  const busy = summary.byOwner.filter(([owner]) => owner !== '(idle)' && owner !== 'node:inspector');
  const total = busy.reduce((s, [, ms]) => s + ms, 0);
  const idle = summary.byOwner.find(([owner]) => owner === '(idle)')?.[1] ?? 0;
  return (
    busy
      .slice(0, n)
      .map(([owner, ms]) => `${owner} ${Math.round(ms).toLocaleString('en-US')} ms (${Math.round((ms / total) * 100)} %)`)
      .join(', ') + ` — busy ${Math.round(total).toLocaleString('en-US')} ms, idle ${Math.round(idle).toLocaleString('en-US')} ms`
  );
}

/** Profiles this process (inspector) while `fn` runs. */
export async function profileInProcess<T>(fn: () => Promise<T>): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  try {
    const result = await fn();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    return { result, profile };
  } finally {
    session.disconnect();
  }
}
