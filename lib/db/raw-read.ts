/**
 * BatchGetItem whose answer is parsed here rather than by the SDK: the
 * history's bucket reads (docs/data-model.md "Recency and CRM targets",
 * "Reads: what the list touches") and the workflow's reads of warehouse
 * contacts (lib/warehouse/warehouse.ts, docs/data-model.md "Warehouse reads").
 *
 * A 1,000-account launch reads about 1,000 bucket items. The SDK's
 * deserializer builds, per item, an object per attribute and per nested
 * value (and the DocumentClient converts each again): measured against
 * DynamoDB Local, ~20–30 ms of CPU for 1,000 items, as much as the whole
 * quote without history. Here the request goes through the SDK as usual
 * (serialization, signing, retries, errors, every middleware), and a
 * middleware placed just inside the SDK's deserializer takes the answer's
 * body when it is a 200: one `JSON.parse`, each item's `B` attribute decoded
 * to a Buffer (no per-entry work; lib/history/store.ts looks entries up in
 * it), lists and maps converted once as `@aws-sdk/util-dynamodb`'s
 * `unmarshall` converts them (the warehouse's contacts; `nativeOf`), and the SDK's deserializer is
 * handed only the answer's `ConsumedCapacity` (its other fields are this
 * function's result). Same measurement: ~10 ms for the same 1,000 items.
 * The request's body is this function's JSON of the keys too (set before
 * signing; the SDK serializes a command without keys): its schema serializer
 * visits each key's values.
 */
import { BatchGetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetWith } from './batch';
import { withoutSdkLogger } from './sdk-logger';

/**
 * One item as read: string attributes as strings, numbers as numbers, binary attributes as Buffers, lists and maps as
 * `unmarshall` gives them (numbers as numbers; a binary value inside a list or map stays its base64 text).
 */
export type RawItem = Record<string, string | number | Buffer | unknown[] | Record<string, unknown> | undefined>;

/** The JSON shape of one attribute value on the wire (DynamoDB's JSON protocol). */
type WireValue = { S?: string; N?: string; B?: string; NULL?: boolean; L?: WireValue[]; M?: Record<string, WireValue> };

/**
 * A value inside a list or map as `unmarshall` gives it (what {@link RawItem} promises): strings, nulls, lists, maps
 * and safe numbers converted here, everything else (booleans, binaries, sets, numbers past 2^53) by `unmarshall`
 * itself. `unmarshall` walks each value with `Object.entries` and reduces each map through a new array per member:
 * for the workflow's contacts (10 maps of 12 members a warehouse item) it took 23.5 ms of CPU per 1,000 accounts,
 * this walk 3.2 ms (Node 24, median of 20 rounds; its session 54 paragraph in
 * bench/README.md "Where the workflow's wall time goes (issue #43, session 52)").
 */
function nativeOf(value: WireValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.NULL !== undefined) return null;
  if (value.M !== undefined) {
    const map: Record<string, unknown> = {};
    for (const name in value.M) {
      // Dropped, as `unmarshall` drops it: assigned, a member named `__proto__` would become the map's prototype.
      if (name !== '__proto__') map[name] = nativeOf(value.M[name]!);
    }
    return map;
  }
  if (value.L !== undefined) return value.L.map(nativeOf);
  if (value.N !== undefined) {
    const number = Number(value.N);
    if (Math.abs(number) <= Number.MAX_SAFE_INTEGER || !Number.isFinite(number)) return number;
  }
  return unmarshall({ value } as Record<string, AttributeValue>).value;
}

/** An item of the wire answer, each attribute reduced to a string, a number, a Buffer, a list or a map (other types are skipped). */
function itemFromWire(item: Record<string, WireValue>): RawItem {
  const out: RawItem = {};
  for (const name in item) {
    const value = item[name]!;
    if (value.S !== undefined) out[name] = value.S;
    else if (value.N !== undefined) out[name] = Number(value.N);
    else if (value.B !== undefined) out[name] = Buffer.from(value.B, 'base64');
    else if (value.L !== undefined || value.M !== undefined) out[name] = nativeOf(value) as unknown[] | Record<string, unknown>;
  }
  return out;
}

/** Reads a response body (a Node stream, a Uint8Array or a string) whole. */
async function bodyBytes(body: unknown): Promise<Buffer> {
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const part of body as AsyncIterable<Buffer | string>) chunks.push(typeof part === 'string' ? Buffer.from(part) : part);
  return Buffer.concat(chunks);
}

/**
 * One BatchGetItem call (at most {@link BATCH_GET_SIZE} keys) whose answer
 * is parsed here. Errors (any status but 200) reach the SDK's deserializer
 * untouched, so they throw as they always do.
 * @returns the items found and the keys DynamoDB left unprocessed.
 */
async function batchGetOnce(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, AttributeValue>[],
  projection: readonly string[],
  consistentRead: boolean,
): Promise<{ items: RawItem[]; unprocessed: Record<string, AttributeValue>[] }> {
  const names = Object.fromEntries(projection.map((name, i) => [`#a${i}`, name]));
  const command = new BatchGetItemCommand({
    RequestItems: {
      [tableName]: {
        Keys: [...keys],
        ConsistentRead: consistentRead,
        ProjectionExpression: Object.keys(names).join(', '),
        ExpressionAttributeNames: names,
      },
    },
  });
  // The SDK's logger middleware walked every attribute of the 100 keys (~15 % of this read's CPU): left out of this command.
  withoutSdkLogger(command);
  // The body is the input's own JSON (the wire format is the input's shape: keys of `S` values, strings, booleans), as the
  // middlewares before serialization left it; the SDK's schema serializer, which walks each of the 100 keys' values (about as
  // much CPU as parsing the answer), gets the input without keys. Every later middleware sees the whole input again.
  let input = command.input;
  let body = '';
  command.middlewareStack.add(
    (next) => async (args) => {
      input = args.input;
      body = JSON.stringify(input);
      const items = input.RequestItems ?? {};
      const withoutKeys = Object.fromEntries(Object.entries(items).map(([table, request]) => [table, { ...request, Keys: [] }]));
      return next({ ...args, input: { ...input, RequestItems: withoutKeys } });
    },
    { step: 'serialize', priority: 'high', name: 'rawBatchGetInput' },
  );
  command.middlewareStack.add(
    (next) => async (args) => {
      const http = args.request as { body?: unknown; headers: Record<string, string> };
      http.body = body;
      for (const name of Object.keys(http.headers)) if (name.toLowerCase() === 'content-length') delete http.headers[name];
      http.headers['content-length'] = String(Buffer.byteLength(body));
      return next({ ...args, input });
    },
    { step: 'serialize', priority: 'low', name: 'rawBatchGetBody' },
  );
  let answer: {
    Responses?: Record<string, Record<string, WireValue>[]>;
    UnprocessedKeys?: Record<string, { Keys?: Record<string, AttributeValue>[] }>;
  } = {};
  command.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const response = result.response as { statusCode?: number; headers: Record<string, string>; body: unknown };
      if (response.statusCode !== 200) return result;
      const bytes = await bodyBytes(response.body);
      answer = JSON.parse(bytes.toString('utf8')) as typeof answer;
      // The SDK's deserializer gets what this function does not return (the capacity a caller asked for), and the answer's
      // true size stays on the response for anyone measuring it (DynamoDB Local sends larger answers chunked, without one).
      response.headers['content-length'] ??= String(bytes.byteLength);
      const rest = { ConsumedCapacity: (answer as { ConsumedCapacity?: unknown }).ConsumedCapacity };
      response.body = Buffer.from(JSON.stringify(rest));
      return result;
    },
    { step: 'deserialize', priority: 'low', name: 'rawBatchGet' },
  );
  // A low-level command through the DocumentClient: it marshals only its own commands, so this one's wire values pass as they are.
  await client.send(command as never);
  return {
    items: (answer.Responses?.[tableName] ?? []).map(itemFromWire),
    unprocessed: answer.UnprocessedKeys?.[tableName]?.Keys ?? [],
  };
}

/**
 * Reads items by key (string `pk` and `sk`) with BatchGetItem, batched and
 * retried as every batch read is ({@link batchGetWith}); the answers parsed
 * by {@link batchGetOnce}.
 * @param projection - the attributes to return besides `pk` (name `sk` here when needed: the history's and the
 *   warehouse's reads tell items apart by `pk` alone, and ~1,000 items' `sk` is ~20 KB of a launch's answer).
 * @returns the items found (absent keys are not returned), each attribute a string, a number or a Buffer.
 */
export async function batchGetRaw(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly { pk: string; sk: string }[],
  projection: readonly string[],
  options: { consistentRead?: boolean } = {},
): Promise<RawItem[]> {
  return batchGetWith(
    keys.map((key): Record<string, AttributeValue> => ({ pk: { S: key.pk }, sk: { S: key.sk } })),
    (pending) => batchGetOnce(client, tableName, pending, ['pk', ...projection], options.consistentRead ?? false),
  );
}
