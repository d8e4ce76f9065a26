/**
 * A transient emulator failure at start is retried, not fatal
 * (README.md#set-up): a DynamoDB Local `InternalFailure` on the stack's first
 * table call, injected by an SDK middleware, is retried with backoff and the
 * stack starts; a failure that is not transient still fails the start at once.
 */
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../infra/local/stack';
import { isTransient, retryTransient } from '../infra/local/retry';
import { spawnedTestTimeout } from './support/spawned';

/** Adds a middleware that fails the first `failures` ListTables calls with `error()`; returns the call counts and a remover. */
function injectListTablesFaults(client: DynamoDBClient, failures: number, error: () => Error) {
  const calls = { listTables: 0, failed: 0 };
  const name = `fault-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ListTablesCommand') {
        calls.listTables++;
        if (calls.failed < failures) {
          calls.failed++;
          throw error();
        }
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { calls, remove: () => client.middlewareStack.remove(name) };
}

const internalFailure = () =>
  new DynamoDBServiceException({
    name: 'InternalFailure',
    $fault: 'server',
    $metadata: { httpStatusCode: 500 },
    message: 'The request processing has failed because of an unknown error.',
  });
const validation = () =>
  new DynamoDBServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'Invalid table name',
  });

let stopStack: (() => Promise<void>) | undefined;
afterAll(async () => stopStack?.());

describe('start retries a transient emulator failure (README.md#set-up)', () => {
  it(
    'starts after two InternalFailure answers on the first table call, retrying with backoff',
    async () => {
      let faults: ReturnType<typeof injectListTablesFaults> | undefined;
      const retries: number[] = [];
      const stack = await startLocalStack({
        api: false,
        onClients: ({ dynamodb }) => (faults = injectListTablesFaults(dynamodb, 2, internalFailure)),
        startRetry: { baseDelayMs: 10, onRetry: (_error, attempt) => retries.push(attempt) },
      });
      try {
        expect(faults!.calls.failed).toBe(2);
        expect(retries).toEqual([1, 2]);
        // The third try went through and the table exists (created by that try).
        faults!.remove();
        const { dynamodb } = await import('../lib/aws');
        const { tableExists } = await import('../infra/local/table');
        expect(await tableExists(dynamodb, stack.endpoints.tableName)).toBe(true);
      } finally {
        faults?.remove();
        stopStack = stack.stop;
      }
    },
    spawnedTestTimeout(),
  );

  // One stack per process (lib/aws.ts builds its clients once): the next tries run the same start step on that emulator.
  it('gives up on a failure that is not transient without retrying', async () => {
    const { dynamodb } = await import('../lib/aws');
    const { ensureTable } = await import('../infra/local/table');
    const faults = injectListTablesFaults(dynamodb, 1, validation);
    const retries: number[] = [];
    try {
      await expect(
        retryTransient(() => ensureTable(dynamodb, 'retry-not-transient'), {
          baseDelayMs: 1,
          onRetry: (_e, attempt) => retries.push(attempt),
        }),
      ).rejects.toMatchObject({ name: 'ValidationException' });
    } finally {
      faults.remove();
    }
    expect(faults.calls.listTables).toBe(1);
    expect(retries).toEqual([]);
  });

  it('gives up after the configured tries when the failure persists', async () => {
    const { dynamodb } = await import('../lib/aws');
    const { ensureTable } = await import('../infra/local/table');
    const faults = injectListTablesFaults(dynamodb, 100, internalFailure);
    try {
      await expect(retryTransient(() => ensureTable(dynamodb, 'retry-persistent'), { attempts: 3, baseDelayMs: 1 })).rejects.toMatchObject({
        name: 'InternalFailure',
      });
    } finally {
      faults.remove();
    }
    expect(faults.calls.listTables).toBe(3);
  });

  it('counts server faults, throttling and refused connections as transient, client errors as not', () => {
    expect(isTransient(internalFailure())).toBe(true);
    expect(isTransient(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransient(new Error('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isTransient(validation())).toBe(false);
    expect(isTransient(new Error('plain'))).toBe(false);
  });
});
