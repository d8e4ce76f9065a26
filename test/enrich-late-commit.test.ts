/**
 * A launch transaction that answers late (docs/reliability.md, "Deadlines"):
 * whenever the charge happened, the answer is 200 with the charged campaign;
 * an error answer is never followed by a charge.
 *
 * The enrich Lambda's own handler is invoked with the event API Gateway would
 * send and a Lambda context whose remaining time is short (the only thing
 * HTTP cannot set). An SDK middleware on the table's client delays the launch
 * transaction (and only it) past the function's timeout: after DynamoDB
 * committed it (its answer is late), before it is sent (the request is late),
 * or by blocking the event loop once it committed. The delay is measured from
 * the context, not fixed: it always outlasts the deadline, however loaded the
 * machine.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handler as enrichHandler } from '../functions/campaigns-enrich';
import { apiGatewayEvent } from '../infra/local/event';
import { lambdaContext } from '../infra/local/lambda-context';
import { ddb } from '../lib/aws';
import { LAUNCH_COMMIT_RESERVE_MS } from '../lib/enrichment/launch';
import { newOrganization, useApi } from './support/api';
import {
  activeAccounts,
  balance,
  createApiCampaign,
  getCampaign,
  importAccounts,
  ledgerOf,
  uniquePrefix,
  waitForStatus,
} from './enrichment/support';

const api = useApi();

/** How the launch transaction is delayed. */
type Delay = 'answer' | 'request' | 'event-loop';

/**
 * Delays the launch transaction of `campaignId` until `left()` has run out plus 1 s; tells whether the transaction
 * was reached, and gives a promise of its own end (the late request's outcome).
 */
function delayLaunchTransaction(campaignId: string, how: Delay, left: () => number) {
  const name = `late-launch-${randomUUID()}`;
  const state = { reached: false };
  let ended!: () => void;
  const hasEnded = new Promise<void>((resolve) => (ended = resolve));
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand' || !JSON.stringify(args.input).includes(campaignId)) return next(args);
      state.reached = true;
      const delayMs = left() + 1_000;
      try {
        if (how === 'request') await new Promise((resolve) => setTimeout(resolve, delayMs));
        const result = await next(args);
        if (how === 'answer') await new Promise((resolve) => setTimeout(resolve, delayMs));
        // The event loop blocked (no timer, no I/O) from the commit until past the function's timeout.
        if (how === 'event-loop') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
        return result;
      } finally {
        ended();
      }
    },
    { step: 'initialize', name },
  );
  return { state, hasEnded, remove: () => ddb.middlewareStack.remove(name) };
}

/**
 * Launches a fresh campaign of 3 accounts through the enrich Lambda with the launch transaction delayed; retries with
 * more time left when the machine was so slow that the launch stopped before its transaction (nothing to test then).
 */
async function lateLaunch(how: Delay) {
  for (const extraMs of [4_000, 12_000, 20_000]) {
    const prefix = uniquePrefix();
    await importAccounts(activeAccounts(prefix, 3));
    const org = await newOrganization({ smbCredits: 10 });
    const campaignId = await createApiCampaign(
      api(),
      org.apiKey,
      activeAccounts(prefix, 3).map((a) => a.accountId),
    );
    const requestId = randomUUID();
    const context = lambdaContext('ApiFunction', requestId, LAUNCH_COMMIT_RESERVE_MS + extraMs);
    const delayed = delayLaunchTransaction(campaignId, how, () => context.getRemainingTimeInMillis());
    try {
      const event = apiGatewayEvent({
        method: 'POST',
        url: '/v1/campaigns/enrich',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ campaignId })),
        requestId,
      });
      const result = await enrichHandler(event, context);
      if (!delayed.state.reached) continue;
      // The late transaction has ended (committed, or refused by its condition): whatever it did is in the table now.
      await delayed.hasEnded;
      return { org, campaignId, status: result.statusCode, body: JSON.parse(result.body ?? 'null') };
    } finally {
      delayed.remove();
    }
  }
  throw new Error('the launch never reached its transaction');
}

/** The invariant: a charge ⇒ 200 with the charged campaign; an error ⇒ no charge, ever. */
async function expectAnswerTellsTheCharge(launch: Awaited<ReturnType<typeof lateLaunch>>) {
  const charges = (await ledgerOf(launch.org.organizationId, launch.campaignId)).entries.filter((e) => e.kind === 'charge');
  if (charges.length > 0) {
    expect(launch.status, JSON.stringify(launch.body)).toBe(200);
    expect(launch.body.data).toMatchObject({ id: launch.campaignId, status: 'enriching', credits: { charged: 3, remaining: 7 } });
    expect(await balance(launch.org.organizationId)).toBe(7);
    // Its workflow runs (started, or started late by the reconciler's rule): the campaign gets enriched.
    await waitForStatus(api(), launch.org.apiKey, launch.campaignId, 'enriched');
  } else {
    expect(launch.status).toBeGreaterThanOrEqual(500);
    expect(await balance(launch.org.organizationId)).toBe(10);
    expect((await getCampaign(api(), launch.org.apiKey, launch.campaignId)).data).toMatchObject({
      status: 'draft',
      credits: { charged: 0 },
    });
  }
  expect(charges.length).toBeLessThanOrEqual(1);
}

describe('a launch transaction that answers after the deadline', () => {
  it('committed, its answer late: 200 with the charged campaign', async () => {
    const launch = await lateLaunch('answer');
    expect(launch.status, JSON.stringify(launch.body)).toBe(200);
    await expectAnswerTellsTheCharge(launch);
  });

  it('sent late: fenced before it reaches the table, answered 500, and never charged when it arrives', async () => {
    const launch = await lateLaunch('request');
    expect(launch.status, JSON.stringify(launch.body)).toBe(500);
    await expectAnswerTellsTheCharge(launch);
    // The lock was released with the fence: a retry launches at once and charges once.
    const again = await enrichHandler(
      apiGatewayEvent({
        method: 'POST',
        url: '/v1/campaigns/enrich',
        headers: { authorization: `Bearer ${launch.org.apiKey}`, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ campaignId: launch.campaignId })),
        requestId: randomUUID(),
      }),
      lambdaContext('ApiFunction', randomUUID()),
    );
    expect(again.statusCode, again.body).toBe(200);
    expect((await ledgerOf(launch.org.organizationId, launch.campaignId)).entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
    await waitForStatus(api(), launch.org.apiKey, launch.campaignId, 'enriched');
  });

  it('committed, then the event loop blocked past the timeout: 200 with the charged campaign', async () => {
    const launch = await lateLaunch('event-loop');
    expect(launch.status, JSON.stringify(launch.body)).toBe(200);
    await expectAnswerTellsTheCharge(launch);
  });
});
