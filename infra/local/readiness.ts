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
  readonly #createdAt = performance.now();
  readonly #doneAt = new Map<ReadinessStep, number>();

  /** @param steps - the steps this stack goes through (default: all of {@link READINESS_STEPS}). */
  constructor(steps: readonly ReadinessStep[] = READINESS_STEPS) {
    this.#pending = new Set(steps);
  }

  /** Marks a step complete (idempotent). */
  done(step: ReadinessStep): void {
    if (this.#pending.has(step)) this.#doneAt.set(step, performance.now() - this.#createdAt);
    this.#pending.delete(step);
    if (this.ready) for (const resolve of this.#waiters.splice(0)) resolve();
  }

  /** The steps still starting, in {@link READINESS_STEPS} order. */
  get starting(): ReadinessStep[] {
    return READINESS_STEPS.filter((step) => this.#pending.has(step));
  }

  /**
   * How long each completed step took, in seconds, in {@link READINESS_STEPS} order: from the previous
   * step's completion (the first: from this object's creation) to its own. `npm start` prints them once
   * ready (the readiness bench module reads them: emulators, migrations, the reconciler's first pass…).
   */
  get stepSeconds(): { step: ReadinessStep; seconds: number }[] {
    let previous = 0;
    return READINESS_STEPS.filter((step) => this.#doneAt.has(step)).map((step) => {
      const at = this.#doneAt.get(step)!;
      const seconds = (at - previous) / 1000;
      previous = at;
      return { step, seconds };
    });
  }

  /** The line `npm start` prints once ready: {@link stepSeconds} as `Ready in T s: step a s, step b s, …`. */
  get summary(): string {
    const steps = this.stepSeconds;
    const total = steps.reduce((sum, { seconds }) => sum + seconds, 0);
    return `Ready in ${total.toFixed(2)} s: ${steps.map(({ step, seconds }) => `${step} ${seconds.toFixed(2)} s`).join(', ')}`;
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
