/**
 * Stores built method by method, so a function's bundle carries only the store
 * methods its operation calls (docs/deploy.md "Prerequisites", bench `bundles`).
 *
 * A store module exports each method as a {@link StoreMethod}: a factory that
 * takes the table and returns the method. The full store is {@link storeOf} with
 * every method; an operation's narrow store is {@link storeOf} with the methods it
 * calls. esbuild drops every factory no bundle names, which it cannot do for the
 * methods of one object literal.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Where a store reads and writes: the document client and the table's name. */
export interface TableAccess {
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** The factory of method `K` of store `S`: given the table, the method itself. */
export type StoreMethod<S, K extends keyof S> = (table: TableAccess) => S[K];

/**
 * The store made of the given methods, each built once against `table`: its type is the store's `Pick` of
 * those methods when each factory is typed as a {@link StoreMethod}.
 * @example storeOf(table, { getEndpoint, rotateSecret }) // Pick<WebhookStore, 'getEndpoint' | 'rotateSecret'>
 */
export function storeOf<M extends Record<string, (table: TableAccess) => unknown>>(
  table: TableAccess,
  methods: M,
): { [K in keyof M]: ReturnType<M[K]> } {
  const store = {} as { [K in keyof M]: ReturnType<M[K]> };
  for (const name of Object.keys(methods) as (keyof M)[]) store[name] = methods[name]!(table) as ReturnType<M[typeof name]>;
  return store;
}
