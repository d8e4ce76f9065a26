/**
 * The per-account outcomes of a launch evaluation (docs/launch.md#per-account-outcomes), in a
 * module of their own so schemas, stores and use cases share them without
 * pulling each other in.
 */

/** Why an account was or was not enriched, in the order `summary` lists them. */
export const ACCOUNT_OUTCOMES = ['invalid', 'recently_enriched', 'crm_excluded', 'pending', 'found', 'not_found'] as const;
/** One account's outcome. */
export type AccountOutcome = (typeof ACCOUNT_OUTCOMES)[number];
