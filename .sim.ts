import { addressOf, bucketOf, encodeBucket, fingerprintOf, itemBytes } from '/work/wt-history/lib/history/store';
const KB = 1024;
const H = Number(process.argv[2] ?? 1_000_000), T = Number(process.argv[3] ?? 200_000), L = Number(process.argv[4] ?? 100);
const now = Date.now();
const fps: string[] = []; const vals: number[] = [];
for (let i = 0; i < H + T; i++) { fps.push(fingerprintOf(`acct_${i}`)); vals.push((now - (i < H ? (10 - Math.floor(i / 100000)) : 0) * 60000) * 2); }
function layout(count: number, N: number) {
  const b = new Map<number, Map<string, number>>();
  for (let i = 0; i < count; i++) { const { bucket } = bucketOf(addressOf(fps[i]!), N); let m = b.get(bucket); if (!m) b.set(bucket, m = new Map()); m.set(fps[i]!, vals[i]!); }
  return b;
}
const item = (org: string, bucket: number, depth: number, m: Map<string, number>) => ({ pk: `ORG#${org}#HBUCKET#${bucket}`, sk: 'HISTORY', type: 'accountHistoryBucket', entries: encodeBucket(m, depth), depth, version: 12 });
const org = 'orgAbCdEfGhIjKlMnOpQrS';
const N0 = Math.ceil(H / L);
const before = layout(H, N0);
let sizes = [...before].map(([b, m]) => itemBytes(item(org, b, bucketOf(0, N0).depth, m)));
const wu0 = sizes.reduce((s, x) => s + Math.ceil(x / KB), 0);
console.log({ H, T, L, N0, avg: sizes.reduce((a, b) => a + b) / sizes.length, max: Math.max(...sizes), rewriteAllWU: wu0 });
// merge T: integrated: final N1, every final bucket written once
const N1 = Math.ceil((H + T) / L);
const after = layout(H + T, N1);
sizes = [...after].map(([b, m]) => itemBytes(item(org, b, bucketOf(b, N1).depth, m)));
const wu1 = sizes.reduce((s, x) => s + Math.ceil(x / KB), 0);
console.log({ N1, integratedWU: wu1, perAcct: wu1 / T, avgRead: sizes.reduce((a, b) => a + b) / sizes.length, max: Math.max(...sizes) });
