/**
 * The local stack's webhook schedule (README.md#set-up, docs/webhooks.md): a timer loop that
 * runs the very delivery code the AWS functions run. Each tick reads the
 * pending index (lib/db/table.ts `WEBHOOK_PENDING_INDEX`) for work that is
 * due — events not yet fanned out, messages whose next attempt has come — and
 * does it: `dispatchEvent` where AWS runs the stream's dispatcher,
 * `attemptDelivery` where AWS runs the delivery state machine's task.
 *
 * Everything the loop needs is in the table, so a process killed at any point
 * loses nothing: the next process's first tick finds the undelivered work
 * (an attempt cut short is taken again once its lease ends). Several
 * processes on one table (the test workers) share the work safely: each
 * attempt first claims its message.
 */
import pMap from 'p-map';
import { deliveryDependencies, webhooks } from '../../lib/root';
import { attemptDelivery, dispatchEvent } from '../../lib/webhooks/delivery';
import { logger } from '../../lib/observability';

/** A running poller. */
export interface WebhookPoller {
  /** Stops the loop and waits for the tick in progress (its attempts end within their 15 s limit). */
  stop(): Promise<void>;
}

/** Items taken per tick, and attempts made at once. */
const BATCH = 25;
const CONCURRENCY = 4;

/** Starts the loop: a tick every `intervalMs` (default 250 ms), never two at once. */
export function startWebhookPoller(options: { intervalMs?: number } = {}): WebhookPoller {
  const intervalMs = options.intervalMs ?? 250;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const tick = async () => {
    const due = await webhooks().duePending(new Date(), BATCH);
    await pMap(
      due,
      async (work) => {
        if (stopped) return;
        const deps = deliveryDependencies();
        if (work.kind === 'event') await dispatchEvent(deps, work.organizationId, work.id);
        else await attemptDelivery(deps, work.organizationId, work.id);
      },
      { concurrency: CONCURRENCY },
    );
  };
  const loop = () => {
    if (stopped) return;
    running = tick()
      .catch((error: unknown) => logger.error('Webhook poller tick failed', { error }))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, intervalMs);
      });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
