/**
 * The soak's load generator: autocannon in a child process of the runner
 * (run.ts), so the load never shares the event loop of the stack it measures.
 *
 * One autocannon request definition draws, for every request, a kind from the
 * mix (protocol.ts), an organization, and a campaign from pools that grow as
 * the run creates and launches campaigns. Every answer is judged against the
 * contract (test/hostile/support/contract.ts) and the answer that kind of
 * request must get; figures are kept per minute and sent to the runner.
 */
import autocannon from 'autocannon';
import { envelopeViolations, OPERATIONS, type OperationName } from '../../test/hostile/support/contract';
import { MIX, type Kind, type LoadConfig, type LoadMessage, type Window } from './protocol';

const send = (message: LoadMessage) => process.send?.(message);

const config = await new Promise<LoadConfig>((resolve) => process.once('message', (m) => resolve(m as LoadConfig)));
const url = new URL(config.apiUrl);

const PATHS: Record<OperationName, string> = OPERATIONS;

/** The statuses each kind of request may get (anything else is an error). */
const EXPECTED: Record<Kind, number[]> = {
  describe: [200],
  get: [200],
  list: [200],
  create: [200],
  update: [200, 409],
  // A launch may be refused for any documented reason (credits, capacity, a repeat call, nothing eligible).
  enrich: [200, 402, 409, 422, 429],
  export: [200, 409, 410, 422],
  invalid: [400],
  unauthenticated: [401],
  foreign: [404],
};

const kinds = Object.keys(MIX) as Kind[];
const totalWeight = kinds.reduce((s, k) => s + MIX[k], 0);
const pickKind = (): Kind => {
  let r = Math.random() * totalWeight;
  for (const k of kinds) if ((r -= MIX[k]) < 0) return k;
  return 'describe';
};
const pick = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[Math.floor(Math.random() * items.length)]);
const STATUSES = ['draft', 'enriching', 'enriched', 'expired', 'tam_only'];

/** Pools of campaigns per organization, grown from the answers. */
const pools = config.organizations.map((o) => ({
  ...o,
  drafts: [...o.drafts],
  launched: [] as string[],
  all: [...o.drafts, ...o.enriched],
  cursor: undefined as string | undefined,
}));

interface Context {
  kind?: Kind;
  op?: OperationName;
  org?: number;
  campaignId?: string;
  sentAt?: number;
  /** An unfiltered list, whose cursor the next unfiltered list of the organization may use. */
  pages?: boolean;
}

/** Builds one request of the mix. */
function build(ctx: Context): { path: string; headers: Record<string, string>; body?: string } {
  let kind = pickKind();
  const orgIndex = Math.floor(Math.random() * pools.length);
  const org = pools[orgIndex]!;
  const other = pools[(orgIndex + 1) % pools.length]!;
  const auth = { authorization: `Bearer ${org.apiKey}` };
  const json = (body: unknown) => ({ headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let op: OperationName = 'describe';
  let request: { headers: Record<string, string>; body?: string } = { headers: auth };
  const draft = pick(org.drafts);
  const any = pick(org.all);
  if ((kind === 'enrich' || kind === 'update') && !draft) kind = 'describe';
  if ((kind === 'get' || kind === 'export' || kind === 'foreign') && !any) kind = 'describe';
  switch (kind) {
    case 'describe':
      op = 'describe';
      break;
    case 'get':
      op = 'get';
      ctx.campaignId = any;
      request = json({ campaignId: any });
      break;
    case 'list': {
      op = 'list';
      const filters = Math.random() < 0.5 ? {} : { status: pick(STATUSES) };
      // Half the lists page on from the previous unfiltered page of this organization.
      const unfiltered = Object.keys(filters).length === 0;
      const cursor = unfiltered && Math.random() < 0.5 ? org.cursor : undefined;
      ctx.pages = unfiltered;
      request = json({ filters, limit: 20, ...(cursor ? { cursor } : {}) });
      break;
    }
    case 'create': {
      op = 'create';
      const size = 3 + Math.floor(Math.random() * 40);
      const ids = Array.from({ length: size }, () => pick(config.accountIds)!);
      request = json({ name: `soak ${Date.now()}`, accountIds: ids, excludeEnrichedWithinDays: Math.random() < 0.2 ? 30 : null });
      break;
    }
    case 'update':
      op = 'update';
      request = json({ campaignId: draft, name: `soak renamed ${Date.now()}` });
      break;
    case 'enrich':
      op = 'enrich';
      ctx.campaignId = draft;
      // A launched draft leaves the pool; a refusal puts it back (onResponse).
      org.drafts.splice(org.drafts.indexOf(draft!), 1);
      request = json({ campaignId: draft });
      break;
    case 'export':
      op = 'export';
      request = json({
        campaignId: pick([...org.launched.slice(-20), ...config.organizations[orgIndex]!.enriched]) ?? any,
        maxContactsPerAccount: 3,
        hasEmail: true,
      });
      break;
    case 'invalid': {
      op = pick(['get', 'list', 'create', 'enrich', 'export', 'update'] as const)!;
      const variants: { headers: Record<string, string>; body: string }[] = [
        { headers: { ...auth, 'content-type': 'application/json' }, body: '{"campaignId":' },
        {
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ campaignId: 'camp_not-a-valid-id', unknown: true }),
        },
        {
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ limit: 9007199254740993, maxContactsPerAccount: -1, name: '', accountIds: [] }),
        },
        { headers: { ...auth, 'content-type': 'application/json' }, body: '{"__proto__":{"polluted":true}}' },
        { headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'campaignId=a&campaignId=b&__proto__[x]=1' },
        { headers: { ...auth, 'content-type': 'text/plain' }, body: 'campaignId=camp_x' },
        { headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ cursor: 'forged.cursor', limit: 5 }) },
        // Multipart bodies cut short after a part, and part headers without their blank line (once an uncaught error and a hang).
        {
          headers: { ...auth, 'content-type': 'multipart/form-data; boundary=soakB' },
          body: '--soakB\r\nContent-Disposition: form-data; name="campaignId"\r\n\r\nx\r\n',
        },
        {
          headers: { ...auth, 'content-type': 'multipart/form-data; boundary=soakB' },
          body: '--soakB\r\nContent-Disposition: form-data; name="campaignId"\r\nx\r\n--soakB--\r\n',
        },
      ];
      // Every variant is invalid for every operation it is sent to.
      request = pick(variants)!;
      break;
    }
    case 'unauthenticated':
      op = pick(['describe', 'get', 'list', 'enrich'] as const)!;
      request = Math.random() < 0.5 ? { headers: {} } : { headers: { authorization: `Bearer cek_${'1'.repeat(40)}` } };
      break;
    case 'foreign': {
      op = pick(['get', 'enrich', 'export', 'update'] as const)!;
      const theirs = pick(other.all) ?? any;
      request = {
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(op === 'update' ? { campaignId: theirs, name: 'intruder' } : { campaignId: theirs }),
      };
      break;
    }
  }
  ctx.kind = kind;
  ctx.op = op;
  ctx.org = orgIndex;
  return { path: PATHS[op], ...request };
}

// ---------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------

interface Sample {
  kind: Kind;
  ms: number;
  error?: string;
  status: number;
}
const started = performance.now();
const minutes: Sample[][] = [];
const timeouts: number[] = [];
const minuteOf = () => Math.floor((performance.now() - started) / 60_000);

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (n: number) => Math.round(n * 10) / 10;

function summarize(samples: Sample[], minute: number, timedOut: number): Window {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const byKind: Window['byKind'] = {};
  for (const kind of kinds) {
    const of = samples.filter((s) => s.kind === kind);
    if (of.length === 0) continue;
    const statuses: Record<string, number> = {};
    for (const s of of) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    byKind[kind] = {
      requests: of.length,
      errors: of.filter((s) => s.error).length,
      p99: round(
        percentile(
          of.map((s) => s.ms).sort((a, b) => a - b),
          99,
        ),
      ),
      statuses,
    };
  }
  return {
    minute,
    requests: samples.length,
    errors: samples.filter((s) => s.error).length,
    timeouts: timedOut,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? 0),
    byKind,
    samples: [...new Set(samples.filter((s) => s.error).map((s) => s.error!))].slice(0, 5),
  };
}

let reported = 0;
const reportMinutes = (upTo: number) => {
  for (; reported < upTo; reported++)
    send({ type: 'minute', window: summarize(minutes[reported] ?? [], reported + 1, timeouts[reported] ?? 0) });
};
const ticker = setInterval(() => reportMinutes(minuteOf()), 1_000);

let finish!: (result: autocannon.Result) => void;
let fail!: (error: unknown) => void;
const ended = new Promise<autocannon.Result>((resolve, reject) => {
  finish = resolve;
  fail = reject;
});
const instance = autocannon(
  {
    url: url.origin,
    connections: config.connections,
    ...(config.rate > 0 ? { overallRate: config.rate } : {}),
    duration: config.minutes * 60,
    timeout: 30,
    method: 'POST',
    requests: [
      {
        method: 'POST',
        setupRequest: (req, context) => {
          const ctx = context as Context;
          const built = build(ctx);
          ctx.sentAt = performance.now();
          return {
            ...req,
            method: 'POST',
            path: built.path,
            headers: built.headers,
            ...(built.body !== undefined ? { body: built.body } : { body: undefined }),
          } as typeof req;
        },
        onResponse: (status, body, context) => {
          const ctx = context as Context;
          const ms = performance.now() - (ctx.sentAt ?? performance.now());
          const kind = ctx.kind ?? 'describe';
          const op = ctx.op ?? 'describe';
          const text = String(body ?? '');
          let parsed: any;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const violations = envelopeViolations(op, {
            status,
            contentType: 'application/json',
            wwwAuthenticate: status === 401 ? 'Bearer' : null,
            text,
            body: parsed,
            ms,
          });
          if (!EXPECTED[kind].includes(status)) violations.push(`${kind} (${op}) answered ${status}: ${text.slice(0, 160)}`);
          // Grow the pools from what the API answered.
          const org = pools[ctx.org ?? 0]!;
          if (kind === 'create' && status === 200) {
            org.drafts.push(parsed.data.id);
            org.all.push(parsed.data.id);
          }
          if (kind === 'enrich' && ctx.campaignId) {
            if (status === 200) org.launched.push(ctx.campaignId);
            else if (status === 402 || status === 429 || status === 409) org.drafts.push(ctx.campaignId);
          }
          if (kind === 'list' && status === 200 && ctx.pages) org.cursor = parsed.data.nextCursor ?? undefined;
          const minute = minuteOf();
          (minutes[minute] ??= []).push({ kind, ms, status, ...(violations.length > 0 ? { error: violations.join('; ') } : {}) });
        },
      },
    ],
  },
  (error, result) => (error ? fail(error) : finish(result)),
);
instance.on('reqError', () => {
  const minute = minuteOf();
  timeouts[minute] = (timeouts[minute] ?? 0) + 1;
});

const result = await ended;
clearInterval(ticker);
const windows = Array.from({ length: config.minutes }, (_, i) => summarize(minutes[i] ?? [], i + 1, timeouts[i] ?? 0));
// Stragglers answered after the last full minute count in the last one.
for (let i = config.minutes; i < minutes.length; i++)
  windows[config.minutes - 1] = summarize(
    [...(minutes[config.minutes - 1] ?? []), ...(minutes[i] ?? [])],
    config.minutes,
    timeouts[config.minutes - 1] ?? 0,
  );
reportMinutes(config.minutes);
send({
  type: 'done',
  windows,
  total: summarize(
    minutes.flat(),
    0,
    timeouts.reduce((s, t) => s + (t ?? 0), 0),
  ),
  autocannon: { requests: result.requests.total, errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx },
});
process.disconnect?.();
