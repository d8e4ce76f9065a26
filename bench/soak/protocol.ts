/**
 * Messages between the soak runner (bench/soak/run.ts, which hosts the local
 * stack) and its load generator (bench/soak/load.ts, a child process running
 * autocannon so the load does not share the server's event loop).
 */

/** The request mix, by operation (relative weights). */
export const MIX = {
  describe: 14,
  get: 18,
  list: 14,
  create: 10,
  update: 4,
  enrich: 10,
  export: 5,
  /** Malformed or invalid bodies: must be 400 invalid_request. */
  invalid: 12,
  /** No key, an unknown key: must be 401 invalid_api_key. */
  unauthenticated: 6,
  /** Another organization's key on a campaign: must be 404 not_found. */
  foreign: 7,
} as const;

/** A request kind of the mix. */
export type Kind = keyof typeof MIX;

/** What the load generator is told. */
export interface LoadConfig {
  apiUrl: string;
  minutes: number;
  connections: number;
  /** Overall request rate cap (requests per second); 0 = as fast as the stack answers. */
  rate: number;
  organizations: { organizationId: string; apiKey: string; drafts: string[]; enriched: string[] }[];
  /** Warehouse account IDs campaigns are drawn from. */
  accountIds: string[];
}

/** Figures of one minute (or of the whole run). */
export interface Window {
  minute: number;
  requests: number;
  /** Answers outside the contract: 5xx, no envelope, an undocumented code, an unexpected status for the request. */
  errors: number;
  /** Requests without an answer within autocannon's timeout, and socket errors. */
  timeouts: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  byKind: Record<string, { requests: number; errors: number; p99: number; statuses: Record<string, number> }>;
  /** First few error descriptions, for the report. */
  samples: string[];
}

/** Child → parent. */
export type LoadMessage =
  | { type: 'minute'; window: Window }
  | { type: 'done'; windows: Window[]; total: Window; autocannon: { requests: number; errors: number; timeouts: number; non2xx: number } };
