/**
 * `POST /v1/campaigns/results/stream` (docs/results.md "The stream"): the
 * accounts of the results page (./results.ts), each with `"type": "account"`,
 * in seq order as they become readable, until the attempt is complete.
 *
 * The same reader as the page: the opening ({@link openReadable}, so every
 * refusal is the page's, before the first byte), the accounts
 * ({@link resultItems}) and the wait (one small read of the sequence head a
 * second). While nothing arrives, a `keepalive` object every
 * `RESULTS_STREAM_KEEPALIVE_SECONDS`; the stream closes with `end` once the
 * attempt is complete, or with `pause` after `RESULTS_STREAM_MAX_SECONDS`
 * (or when the attempt ends otherwise: failed or canceled), from which the
 * reader resumes with its `lastSeq` (`afterSeq`, or `Last-Event-ID` for
 * Server-Sent Events).
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { ApiError } from '../errors';
import { deliverable, deliverAll, type Delivery } from '../results/deliverable';
import { JsonBytes, type ResultItem } from '../results/json';
import { framingOf, lastEventIdOf, StreamedAnswer, type StreamObject } from '../http/stream';
import { openReadable, openResults, selectionOf, writeResultItems, type OpenedResults, type ResultsDependencies } from './results';
import type { CampaignResultsStreamInput } from './schema';

/** The response header naming the attempt the streamed seqs belong to (the page's `attemptId`). */
export const ATTEMPT_ID_HEADER = 'Attempt-Id';

/** How a stream paces itself (the deployment's settings, lib/config.ts). */
export interface StreamTiming {
  /** A keep-alive after this long without an account (ms). */
  keepAliveMs: number;
  /** The stream pauses after this long (ms). */
  maxMs: number;
}

/** The objects closing a stream: `end` (complete) or `pause` (resume from `lastSeq`). */
export type StreamClose = { type: 'end'; lastSeq: number; complete: true } | { type: 'pause'; lastSeq: number; complete: false };

/** What a results stream writes: the accounts, the keep-alives, and one closing object. */
export type ResultsStreamObject =
  | {
      type: 'account';
      seq: number;
      /**
       * The object's JSON ({@link ResultItem} with `type` first) in UTF-8, copied from the stored part: a view of
       * the stream's one item buffer, valid until the next object is asked for (the body copies it into its chunk).
       */
      json: Uint8Array;
      /** Another account follows at once (one already readable). */ more: boolean;
    }
  | { type: 'keepalive' }
  | StreamClose;

/** The request headers a stream reads: `accept` (the framing) and `last-event-id` (an SSE reconnect's position). */
export type StreamHeaders = Readonly<Record<string, string | undefined>>;

/**
 * Opens the results of a campaign as a stream. Everything that can be
 * refused is refused here, before the answer's first byte: the campaign's
 * state (as the page), the `Last-Event-ID` header (400).
 *
 * The reader's position is the `Last-Event-ID` header when present (an SSE
 * reconnect), the body's `afterSeq` otherwise.
 * @throws as {@link openReadable}; InvalidRequestError (400) for a `Last-Event-ID` that is not an integer ≥ 0.
 */
export async function streamCampaignResults(
  deps: ResultsDependencies,
  organizationId: string,
  input: CampaignResultsStreamInput,
  headers: StreamHeaders,
  timing: StreamTiming,
): Promise<StreamedAnswer> {
  const framing = framingOf(headers.accept);
  const afterSeq = lastEventIdOf(headers['last-event-id']) ?? input.afterSeq ?? 0;
  const { opened, ref, lastGiven } = await openReadable(deps, organizationId, input.campaignId, { afterSeq });
  const selection = selectionOf(input);
  const policyOf = deps.deliveryPolicy ?? deliverAll;
  const readDelivery = async () => deliverable(selection, await policyOf(organizationId));
  const delivery: StreamDelivery = { opening: await readDelivery(), now: readDelivery };
  return new StreamedAnswer(
    framing,
    (signal) => asStreamObjects(resultsStream(deps, { ...ref, opened, lastGiven }, afterSeq, delivery, timing, signal)),
    { [ATTEMPT_ID_HEADER.toLowerCase()]: ref.attemptId },
  );
}

/**
 * What a stream may deliver (lib/results/deliverable.ts): the one read when it opened, before the first byte, and
 * how to read it again (the organization's suppressions now: with the cached policies, one small read of the sets'
 * versions), which the stream does before each later run of newly readable accounts (docs/results.md "The stream").
 */
export interface StreamDelivery {
  opening: Delivery;
  now: () => Promise<Delivery>;
}

/** The SSE `id:` of an account is its seq; a keep-alive is a comment. */
async function* asStreamObjects(objects: AsyncIterable<ResultsStreamObject>): AsyncGenerator<StreamObject> {
  for await (const data of objects) {
    yield data.type === 'account'
      ? { data, jsonBytes: data.json, id: data.seq, more: data.more }
      : data.type === 'keepalive'
        ? { data, keepAlive: true }
        : { data };
  }
}

/**
 * The stream's objects from `afterSeq` on: every readable account in seq
 * order, a keep-alive when none came for `keepAliveMs`, then `end` or
 * `pause`. Looks at the sequence head once a second while waiting (as the
 * long poll), and at the campaign once per keep-alive (an attempt that
 * failed or was canceled pauses the stream: the reader's resume is refused
 * as the page refuses it). What may be delivered is read again before each
 * run of newly readable accounts, and within a run at least once per
 * `keepAliveMs` (docs/privacy.md "Suppressions": a suppression answered before an account
 * is read keeps its contact out, as the page's read after its wait does).
 */
export async function* resultsStream(
  deps: ResultsDependencies,
  start: { organizationId: string; campaignId: string; attemptId: string; opened: OpenedResults; lastGiven: number },
  afterSeq: number,
  deliveries: StreamDelivery,
  timing: StreamTiming,
  signal: AbortSignal,
): AsyncGenerator<ResultsStreamObject> {
  const ref = { organizationId: start.organizationId, campaignId: start.campaignId, attemptId: start.attemptId };
  const startedAt = Date.now();
  const pauseAt = startedAt + timing.maxMs;
  const eligible = start.opened.attempt.eligible;
  let status = start.opened.status;
  let lastGiven = start.lastGiven;
  let position = afterSeq;
  let lastWrite = startedAt;
  let delivery = deliveries.opening;
  /** When `delivery` was read (the opening's read counts as now); undefined once the next run must read it again. */
  let deliveryAt: number | undefined = startedAt;
  const pause = (): StreamClose => ({ type: 'pause', lastSeq: position, complete: false });
  // Each account is written here from the stored part's bytes, handed out as a view, and overwritten by the next.
  const item = new ItemBytes();
  /** The campaign still runs this attempt (its status now), or undefined when the attempt ended otherwise. */
  const recheck = async () => {
    try {
      const opened = await openResults(deps, ref.organizationId, ref.campaignId, { afterSeq: position });
      return opened.attempt.id === ref.attemptId ? opened.status : undefined;
    } catch (error) {
      if (error instanceof ApiError && error.statusCode < 500) return undefined;
      throw error;
    }
  };
  while (!signal.aborted) {
    if (lastGiven > position) {
      if (deliveryAt === undefined) {
        delivery = await deliveries.now();
        deliveryAt = Date.now();
      }
      let cut = false;
      for await (const seq of writeResultItems(deps, ref, position, lastGiven, delivery, item, { type: 'account' })) {
        yield { type: 'account', seq, json: item.view(), more: seq < lastGiven };
        item.clear();
        position = seq;
        if (signal.aborted) return;
        if (Date.now() >= pauseAt && position < lastGiven) {
          yield pause();
          return;
        }
        // A long run (a backlog) reads the policy again once per keep-alive interval: the loop resumes at once.
        if (Date.now() - deliveryAt >= timing.keepAliveMs && position < lastGiven) {
          cut = true;
          break;
        }
      }
      lastWrite = Date.now();
      deliveryAt = undefined;
      if (cut) continue;
    }
    if (position >= eligible) {
      // Every eligible account has its seq: complete once the attempt is enriched (its last step may still run).
      if (status !== 'enriched') {
        const now = await recheck();
        if (now === undefined) {
          yield pause();
          return;
        }
        status = now;
      }
      if (status === 'enriched') {
        yield { type: 'end', lastSeq: position, complete: true };
        return;
      }
    }
    if (Date.now() - lastWrite >= timing.keepAliveMs) {
      yield { type: 'keepalive' };
      lastWrite = Date.now();
      const current = await recheck();
      if (current === undefined) {
        yield pause();
        return;
      }
      status = current;
    }
    if (Date.now() >= pauseAt) {
      yield pause();
      return;
    }
    const wait = Math.max(1, Math.min(deps.pollMs ?? 1_000, lastWrite + timing.keepAliveMs - Date.now(), pauseAt - Date.now()));
    await sleepFor(wait, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    lastGiven = await deps.sequence.lastSeq(ref.campaignId, ref.attemptId);
  }
}

/** The stream's item buffer: the JSON of one account at a time, read as a view of the bytes written (no string made). */
class ItemBytes extends JsonBytes {
  /** The bytes written since the last {@link clear}: a view, overwritten by what is written next. */
  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  /** Empties the buffer (kept, with its size, for the next account). */
  clear(): void {
    this.length = 0;
  }
}
