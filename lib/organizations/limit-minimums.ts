/**
 * The smallest value of each limit override (docs/limits.md), in a module of
 * its own with no imports: the operator CLI's option parsers use it without
 * loading the table's client (bin/ops.mjs starts fast).
 */
/** The smallest value of each override (a whole number at least this; `null` removes it). */
export const LIMIT_MINIMUMS = {
  requests: 1,
  windowSeconds: 1,
  exportsPerHour: 1,
  uploadsPerHour: 1,
  monthlySpendLimit: 0,
  lowBalanceThreshold: 0,
} as const satisfies Record<string, number>;
