/**
 * Readiness of the local stack (README.md#set-up): what `npm start` must finish
 * before `GET /health` answers 200 and the banner is printed. Until then the
 * server, listening from the first second, answers `/health` with 503 and
 * the steps still starting.
 */

/** Everything a user or the operator CLI needs, in the order `npm start` completes them. */
export const READINESS_STEPS = [
  /** DynamoDB Local and the S3 endpoint answer; the table and the bucket exist. */
  'backing services',
  /** Every data migration recorded as run on this table (lib/migrations). */
  'migrations',
  /** The API handlers and the local Step Functions endpoint are loaded. */
  'API',
  /** The enrichment reconciler's pass at start (it resumes what the last stop interrupted). */
  'reconciler first pass',
  /** `<data folder>/endpoints.json`, by which the operator CLI finds the stack. */
  'endpoints.json',
  /** The demo organization, its key and the demo warehouse. */
  'demo data',
] as const;

/** One step of {@link READINESS_STEPS}. */
export type ReadinessStep = (typeof READINESS_STEPS)[number];

/** The steps of a starting stack still to complete; ready once none is. */
export class Readiness {
  readonly #pending: Set<ReadinessStep>;
  readonly #waiters: (() => void)[] = [];

  /** @param steps - the steps this stack goes through (default: all of {@link READINESS_STEPS}). */
  constructor(steps: readonly ReadinessStep[] = READINESS_STEPS) {
    this.#pending = new Set(steps);
  }

  /** Marks a step complete (idempotent). */
  done(step: ReadinessStep): void {
    this.#pending.delete(step);
    if (this.ready) for (const resolve of this.#waiters.splice(0)) resolve();
  }

  /** The steps still starting, in {@link READINESS_STEPS} order. */
  get starting(): ReadinessStep[] {
    return READINESS_STEPS.filter((step) => this.#pending.has(step));
  }

  /** Whether every step completed. */
  get ready(): boolean {
    return this.#pending.size === 0;
  }

  /** Resolves once every step completed. */
  whenReady(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
