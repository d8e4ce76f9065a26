/**
 * Meters the bench adds from outside the product code, for the cost model
 * (bench/lib/cost.ts) and the per-function CPU figures:
 *
 * - {@link CpuLedger}: CPU-seconds of this process attributed to the handler
 *   invocations in flight (API routes and workflow tasks), processor-sharing
 *   style: the CPU used between two begin/end events is split evenly over the
 *   invocations then in flight. Everything else this process does meanwhile
 *   (the local HTTP server, the Step Functions runner) is charged to them
 *   too, so per-invocation figures are upper bounds (s3rver runs in a
 *   process of its own and is not).
 * - {@link patchLocalStepFunctions}: wraps aws-local-stepfunctions'
 *   `StateMachine.prototype.run` so every execution's event log is counted
 *   (state transitions as Step Functions Standard bills them: one per state
 *   entered, retries included) and every task invocation goes through the
 *   ledger (and can be held, to keep a campaign `enriching`).
 * - {@link watchHttp}: Node's `http` diagnostics channels, to count requests
 *   this process sends to Step Functions (by the caller's scope).
 * - {@link s3ServerRequest}: the requests s3rver serves (from any process,
 *   e.g. the export Lambda's child), as its process reports them.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import type { S3ServedRequest } from '../../infra/local/emulators';

/** Process CPU so far, seconds. */
const cpuNow = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

/** Resolves at `timestamp` (an ISO string; anything else resolves at once); the timers do not keep the process alive. */
async function sleepUntil(timestamp: unknown): Promise<void> {
  if (typeof timestamp !== 'string') return;
  for (let left = Date.parse(timestamp) - Date.now(); left > 0; left = Date.parse(timestamp) - Date.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 2 ** 31 - 1)).unref());
  }
}

/** One handler invocation's measured CPU. */
export interface Invocation {
  kind: string;
  cpuSeconds: number;
  wallSeconds: number;
}

/** CPU-seconds attributed to invocations in flight (processor sharing). */
export class CpuLedger {
  private readonly inFlight = new Set<{ kind: string; cpu: number; started: number }>();
  private last = cpuNow();
  /** Every finished invocation, oldest first. */
  readonly invocations: Invocation[] = [];

  private settle(): void {
    const now = cpuNow();
    const share = this.inFlight.size ? (now - this.last) / this.inFlight.size : 0;
    for (const entry of this.inFlight) entry.cpu += share;
    this.last = now;
  }

  /** Starts an invocation of `kind`; call the returned function when it ends (returns its record). */
  begin(kind: string): () => Invocation {
    this.settle();
    const entry = { kind, cpu: 0, started: performance.now() };
    this.inFlight.add(entry);
    return () => {
      this.settle();
      this.inFlight.delete(entry);
      const record = { kind, cpuSeconds: entry.cpu, wallSeconds: (performance.now() - entry.started) / 1000 };
      this.invocations.push(record);
      return record;
    };
  }

  /** Invocations finished since index `from` (see `invocations.length`), grouped by kind. */
  byKind(from = 0): Map<string, { count: number; cpuSeconds: number; wallSeconds: number }> {
    const totals = new Map<string, { count: number; cpuSeconds: number; wallSeconds: number }>();
    for (const inv of this.invocations.slice(from)) {
      const t = totals.get(inv.kind) ?? { count: 0, cpuSeconds: 0, wallSeconds: 0 };
      t.count++;
      t.cpuSeconds += inv.cpuSeconds;
      t.wallSeconds += inv.wallSeconds;
      totals.set(inv.kind, t);
    }
    return totals;
  }
}

/** What one local execution did, from its event log. */
export interface ExecutionMeter {
  campaignId: string | undefined;
  name: string;
  startedAt: number;
  /** States entered (including those inside Map iterations) plus retries: Standard workflows' billed transitions. */
  transitions: number;
  /** Transitions before the execution entered `WaitForResultsExpiry` (launch → completion). */
  transitionsBeforeExpiryWait: number | undefined;
  /** When it entered `WaitForResultsExpiry` (`performance.now()` ms). */
  expiryWaitAt: number | undefined;
  enteredByState: Map<string, number>;
  /** Task invocations by state, with their measured CPU (ledger). */
  tasks: Map<string, { count: number; cpuSeconds: number }>;
  ended: boolean;
}

type RunOptions = {
  overrides?: { taskResourceLocalHandlers?: Record<string, (input: unknown) => Promise<unknown>> };
  context?: { Execution?: { Name?: string } };
};

/**
 * Wraps `StateMachine.prototype.run` of aws-local-stepfunctions (the class
 * the local stack's endpoint uses) so each execution is metered. Call before
 * the local Step Functions endpoint is created.
 */
export async function patchLocalStepFunctions(ledger: CpuLedger, task: (state: string) => string) {
  const { StateMachine } = await import('aws-local-stepfunctions');
  const executions: ExecutionMeter[] = [];
  const held = new Map<string, { promise: Promise<void>; release: () => void }>();
  const proto = StateMachine.prototype as unknown as {
    run: (input: unknown, options?: RunOptions) => { eventLogs: AsyncGenerator<{ type: string; state?: { name: string } }> };
  };
  const original = proto.run;
  proto.run = function run(this: unknown, input: unknown, options: RunOptions = {}) {
    // A Map iteration runs as a nested state machine with the root's options (already wrapped); its events
    // reach the root's log, which is the one read here.
    if ((options as { _rootAbortSignal?: unknown })._rootAbortSignal) return original.call(this, input, options);
    const meter: ExecutionMeter = {
      campaignId: (input as { campaignId?: string } | null)?.campaignId,
      name: options.context?.Execution?.Name ?? '',
      startedAt: performance.now(),
      transitions: 0,
      transitionsBeforeExpiryWait: undefined,
      expiryWaitAt: undefined,
      enteredByState: new Map(),
      tasks: new Map(),
      ended: false,
    };
    executions.push(meter);
    const handlers = options.overrides?.taskResourceLocalHandlers ?? {};
    const wrapped = Object.fromEntries(
      Object.entries(handlers).map(([state, handler]) => [
        state,
        async (taskInput: unknown) => {
          const gate = meter.campaignId ? held.get(meter.campaignId) : undefined;
          if (gate) await gate.promise;
          // The local ExpireResults handler first sleeps until resultsExpireAt (infra/local/step-functions.ts);
          // that wait is the Wait state's on AWS, not the function's, so it is waited out before metering.
          await sleepUntil((taskInput as { resultsExpireAt?: unknown } | null)?.resultsExpireAt);
          const end = ledger.begin(task(state));
          try {
            return await handler(taskInput);
          } finally {
            const { cpuSeconds } = end();
            const t = meter.tasks.get(state) ?? { count: 0, cpuSeconds: 0 };
            t.count++;
            t.cpuSeconds += cpuSeconds;
            meter.tasks.set(state, t);
          }
        },
      ]),
    );
    const execution = original.call(this, input, { ...options, overrides: { ...options.overrides, taskResourceLocalHandlers: wrapped } });
    void (async () => {
      try {
        for await (const event of execution.eventLogs) {
          if (event.type === 'StateEntered' || event.type === 'StateRetried') {
            meter.transitions++;
            const name = event.state?.name ?? '?';
            if (event.type === 'StateEntered') meter.enteredByState.set(name, (meter.enteredByState.get(name) ?? 0) + 1);
            if (event.type === 'StateEntered' && name === 'WaitForResultsExpiry') {
              meter.transitionsBeforeExpiryWait = meter.transitions - 1;
              meter.expiryWaitAt = performance.now();
            }
          }
        }
      } catch {
        // An aborted execution ends its log with an error; what was counted stands.
      } finally {
        meter.ended = true;
      }
    })();
    return execution;
  };
  return {
    executions,
    /** The executions of a campaign, oldest first. */
    of: (campaignId: string) => executions.filter((e) => e.campaignId === campaignId),
    /** Holds every task invocation of `campaignId` until the returned function is called. */
    hold(campaignId: string): () => void {
      let release!: () => void;
      const promise = new Promise<void>((resolve) => (release = resolve));
      held.set(campaignId, { promise, release });
      return () => {
        held.delete(campaignId);
        release();
      };
    },
  };
}

/** One request s3rver served, as seen by its HTTP server (in its own process; see {@link s3ServerRequest}). */
export interface S3ServerRequest {
  at: number;
  method: string;
  /** Request class as S3 bills it: `put` (PUT, COPY, POST, LIST), `get` (GET, HEAD and the rest), `delete` (free). */
  billing: 'put' | 'get' | 'delete';
  /** Bytes of the response body (Content-Length), when sent. */
  bytesOut: number;
  /** Bytes of the request body (Content-Length). */
  bytesIn: number;
}

/** S3 request class of a request, from its method and query. */
export function s3Billing(method: string, url: string): S3ServerRequest['billing'] {
  if (method === 'DELETE') return 'delete';
  if (method === 'PUT' || method === 'POST') return method === 'POST' && /[?&]delete(=|&|$)/.test(url) ? 'delete' : 'put';
  if (method === 'GET' && /[?&](list-type=2|prefix=|delimiter=)/.test(url)) return 'put';
  if (method === 'GET' && /^\/[^/?]+\/?(\?|$)/.test(url)) return 'put'; // ListObjects on the bucket itself
  return 'get';
}

/**
 * One request the local S3 endpoint reported (infra/local/emulators.ts
 * `startS3Local`'s `onRequest`: s3rver runs in a process of its own), in
 * this process's terms: `at` on this process's `performance.now()` clock, the
 * request classed by {@link s3Billing}.
 */
export function s3ServerRequest(served: S3ServedRequest): S3ServerRequest {
  return {
    at: served.at - performance.timeOrigin,
    method: served.method,
    billing: s3Billing(served.method, served.url),
    bytesOut: served.bytesOut,
    bytesIn: served.bytesIn,
  };
}

/**
 * Subscribes to Node's `http` diagnostics channels: outgoing Step Functions
 * requests of this process are passed to `onStepFunctions` (in the caller's
 * async context).
 */
export function watchHttp(options: { onStepFunctions: (target: string) => void }): void {
  subscribe('http.client.request.start', (message) => {
    const request = (message as { request: ClientRequest }).request;
    const target = request.getHeader('x-amz-target');
    if (typeof target === 'string' && target.startsWith('AWSStepFunctions.')) options.onStepFunctions(target);
  });
}
