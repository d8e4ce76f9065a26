/**
 * Named conditions on a campaign item (value placeholders start with `:c_`), one export each: import the module
 * as a namespace (`import * as campaignIs from './conditions'`), so a bundle carries the conditions its function
 * writes (docs/deploy.md "Prerequisites"). The item itself is `item.ts`.
 */
import type { Clause } from '../db/expression';

/** The item exists. */
export const present = (): Clause => ({ expression: 'attribute_exists(pk)' });

/** An API-created draft: the only campaigns enrich and update may change (docs/launch.md; docs/campaigns.md). */
export const apiDraft = (): Clause => ({
  expression: 'createdVia = :c_api AND #status = :c_draft',
  names: { '#status': 'status' },
  values: { ':c_api': 'api', ':c_draft': 'draft' },
});

/** No launch evaluates it now (no lock, or the holder's lock expired; docs/errors.md). */
export const unlocked = (now: Date): Clause => ({
  expression: 'attribute_not_exists(launchLock) OR launchLock.expiresAt < :c_now',
  values: { ':c_now': now.toISOString() },
});

/** The launch lock is held by `token` and has not expired at `now`: a late launch never commits (docs/errors.md). */
export const lockedBy = (token: string, now: Date): Clause => ({
  expression: 'launchLock.#token = :c_token AND launchLock.expiresAt >= :c_now',
  names: { '#token': 'token' },
  values: { ':c_token': token, ':c_now': now.toISOString() },
});

/** `enriching` with `attemptId` as its current attempt. */
export const runningAttempt = (attemptId: string): Clause => ({
  expression: '#status = :c_enriching AND attempt.id = :c_attempt',
  names: { '#status': 'status' },
  values: { ':c_enriching': 'enriching', ':c_attempt': attemptId },
});

/** `attemptId` is its current (or completed) attempt. */
export const ofAttempt = (attemptId: string): Clause => ({ expression: 'attempt.id = :c_attempt', values: { ':c_attempt': attemptId } });

/** Stored `enriched` and `resultsExpireAt` reached at `now` (docs/lifetimes.md). */
export const due = (now: Date): Clause => ({
  expression: '#status = :c_enriched AND resultsExpireAt <= :c_now',
  names: { '#status': 'status' },
  values: { ':c_enriched': 'enriched', ':c_now': now.toISOString() },
});
