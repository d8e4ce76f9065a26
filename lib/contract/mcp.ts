/**
 * What agents see of the API (docs/agents.md): the MCP tools, one per
 * customer operation, and the discovery documents (`/.well-known/api-catalog`,
 * `/llms.txt`, the MCP server card), all built from the OpenAPI document
 * (lib/contract/openapi.ts), so a tool's schemas are its operation's.
 *
 * Every customer operation of the route list (infra/routes.ts) is a tool
 * ({@link isMcpTool}): a new operation gets its tool with no hand work.
 */
import type { Operation } from '../http/operation';
import { createKeyOperation, listKeysOperation, revokeKeyOperation, rotateKeyOperation } from '../organizations/schema';
import { createCampaignOperation, enrichCampaignOperation, updateCampaignOperation } from '../campaigns/schema';
import { cancelCampaignOperation } from '../enrichment/schema';
import { exportCampaignOperation } from '../exports/schema';
import { createUploadOperation } from '../uploads/schema';
import {
  createErasureOperation,
  createSuppressionsOperation,
  deleteSuppressionOperation,
  getErasureOperation,
  listErasuresOperation,
  listSuppressionsOperation,
} from '../privacy/schema';
import { buildOpenApiDocument, documented, SUPPORT } from './openapi';

/** MCP tool annotations (MCP specification, "Tool annotations"): hints a client shows its user. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Reads: change nothing. */
const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Writes that only add or change the organization's own records, ending nothing. */
const WRITE = (idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: idempotent,
  openWorldHint: false,
});
/** Writes that spend or give back credits, start or stop work, end a key or remove data. */
const DESTRUCTIVE = (idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: idempotent,
  openWorldHint: false,
});

/**
 * Why an operation has no tool, by what excludes it: `createUpload` (the
 * agent would have to PUT a file to a presigned URL; create takes up to
 * 100,000 IDs inline) and every operation of the `webhooks:manage` scope (an
 * agent has no endpoint to receive deliveries). Every other customer
 * operation of the route list (infra/routes.ts) is a tool, with no hand work:
 * {@link isMcpTool}.
 */
export const NOT_TOOLS = {
  operations: {
    [createUploadOperation.operationId]:
      'the agent would have to PUT a file to a presigned URL; create_campaign takes up to 100,000 IDs inline',
  },
  scopes: { 'webhooks:manage': 'an agent has no endpoint to receive webhook deliveries; it reads the same events with list_events' },
  streaming: 'a tool call answers one result, not a stream; list_campaign_results reads the same accounts page by page',
} as const satisfies { operations: Record<string, string>; scopes: Partial<Record<Operation['scope'], string>>; streaming: string };

/** Whether an operation of the route list is an MCP tool (everything but {@link NOT_TOOLS}). */
export const isMcpTool = (operation: Operation): boolean =>
  !(operation.operationId in NOT_TOOLS.operations) && !(operation.scope in NOT_TOOLS.scopes) && !operation.streaming;

/**
 * The annotations of the tools that are not plain reads, each with why.
 * An operation not here is read-only when its scope is a `…:read` scope, and
 * otherwise gets the MCP defaults for a tool nobody described (may destroy,
 * not idempotent): the cautious reading until someone adds its line.
 */
const ANNOTATIONS: Record<string, ToolAnnotations> = {
  [createCampaignOperation.operationId]: WRITE(false),
  // The same update twice leaves the campaign as the first left it.
  [updateCampaignOperation.operationId]: WRITE(true),
  // A second call on the launched campaign charges nothing, but after a cancel it would launch (and charge) again.
  [enrichCampaignOperation.operationId]: DESTRUCTIVE(false),
  // A cancel repeated answers the canceled campaign again (docs/idempotency.md).
  [cancelCampaignOperation.operationId]: DESTRUCTIVE(true),
  // Writes a new CSV file and URL each call and counts toward the exports per hour: a repeat has an effect of its own.
  [exportCampaignOperation.operationId]: WRITE(false),
  // Keys (the keys:manage scope): listing reads; a new key each time; a rotation gives a new secret and stops at once a
  // secret an earlier rotation left in its overlap (a repeat ends a secret still in use); a revoke ends a key for good
  // (repeating it changes nothing more).
  [listKeysOperation.operationId]: READ,
  [createKeyOperation.operationId]: WRITE(false),
  [rotateKeyOperation.operationId]: DESTRUCTIVE(false),
  [revokeKeyOperation.operationId]: DESTRUCTIVE(true),
  // Privacy: reads under the privacy:manage scope; suppressing an address twice leaves one suppression;
  // lifting one lets its contact be delivered again; an erasure removes data for good (a new request each call).
  [listSuppressionsOperation.operationId]: READ,
  [getErasureOperation.operationId]: READ,
  [listErasuresOperation.operationId]: READ,
  [createSuppressionsOperation.operationId]: WRITE(true),
  [deleteSuppressionOperation.operationId]: DESTRUCTIVE(true),
  [createErasureOperation.operationId]: DESTRUCTIVE(false),
};

/** An operation's tool annotations: its line of {@link ANNOTATIONS}, else derived from its scope. */
export function toolAnnotations(operation: Operation): ToolAnnotations {
  return (
    ANNOTATIONS[operation.operationId] ??
    (operation.scope.endsWith(':read') ? READ : { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false })
  );
}

/**
 * The annotations as `tools/list` carries them: only the hints that differ
 * from what the MCP specification ("Tool annotations") says an absent hint
 * means, so nothing is lost. `openWorldHint` is always written (its default is
 * `true`); `readOnlyHint` only when true (default false); on a read-only tool
 * `destructiveHint` and `idempotentHint` are left out (the specification gives
 * them meaning only when `readOnlyHint` is false); otherwise `destructiveHint` is always written (the
 * hint a client shows before a call) and `idempotentHint` only when true (default false).
 */
export function listedAnnotations(annotations: ToolAnnotations): Partial<ToolAnnotations> {
  const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = annotations;
  if (readOnlyHint) return { readOnlyHint, openWorldHint };
  return { destructiveHint, ...(idempotentHint ? { idempotentHint } : {}), openWorldHint };
}

/**
 * The annotations a client reads from {@link listedAnnotations}: each absent hint at the specification's default
 * (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false, `openWorldHint` true), and on a read-only
 * tool the values this server means (nothing destroyed, repeating it changes nothing).
 */
export function annotationsRead(listed: Partial<ToolAnnotations>): ToolAnnotations {
  if (listed.readOnlyHint) return { ...READ, ...listed };
  return { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true, ...listed };
}

/** Most bytes of the `tools/list` answer (issue #42 budget: 64 KB). */
export const TOOLS_LIST_BUDGET_BYTES = 64 * 1024;

/**
 * Most bytes of the `tools/list` answer the tools may take today (58 KB): the
 * budget less 6 KB kept for the next tools (one tool takes 1 to 3 KB).
 */
export const TOOLS_LIST_HEADROOM_BYTES = 58 * 1024;

/** Longest description of a tool, in characters (issue #42 budget). */
export const MAX_TOOL_DESCRIPTION_CHARS = 1_000;

/** The tool name of an operation: its operationId in snake_case (`listCampaignAccounts` → `list_campaign_accounts`). */
export const toolName = (operationId: string): string => operationId.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** One MCP tool as `tools/list` answers it. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** The hints that differ from the specification's defaults ({@link listedAnnotations}). */
  annotations: Partial<ToolAnnotations>;
  /** Whether a call may run as a task (MCP Tasks extension): on the tools of {@link TASK_TOOLS} only. */
  execution?: { taskSupport: 'optional' };
}

/** The tools that run as a task when the client asks (docs/agents.md "Long runs: tasks"): the paid launch. */
export const TASK_TOOLS: ReadonlySet<string> = new Set([enrichCampaignOperation.operationId]);

/** An MCP tool and the operation it calls. */
export interface McpToolBinding {
  tool: McpTool;
  operation: Operation;
}

type JsonSchema = { type: 'object'; [key: string]: unknown };

/** A JSON value with every `$ref` into the document's components replaced by its target. */
function inlineRefs(node: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, components));
  if (!node || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as Record<string, unknown>;
  if (typeof $ref === 'string') {
    const name = $ref.replace('#/components/schemas/', '');
    return inlineRefs({ ...(components[name] as object), ...rest }, components);
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inlineRefs(value, components)]));
}

/** Keywords of the OpenAPI document that are not JSON Schema (or only show examples): no tool schema carries them. */
const DOCUMENT_ONLY_KEYWORDS = new Set(['example', 'examples', 'discriminator', 'xml', 'externalDocs']);
/** Bounds of a value, which output schemas drop: they check an answer's shape, and the server wrote the answer. */
const BOUND_KEYWORDS = new Set([
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
]);
/** Keywords whose value maps names to schemas (the names are data, never keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs']);

type Json = Record<string, unknown>;
const isObject = (node: unknown): node is Json => !!node && typeof node === 'object' && !Array.isArray(node);

/**
 * A `oneOf` (or `anyOf`) of closed objects (`additionalProperties: false`;
 * the campaign's variants by status, the feed's events by type) written as one closed object: the properties every
 * branch that has them shares, once, and per branch only what tells it
 * apart (its own schema of a property the branches give different schemas,
 * e.g. `status`'s `const`, and what it requires beyond the shared part).
 * Looser in one way only: a property of some branches is not refused on
 * another. Any other node is returned as it is.
 */
function factorOneOf(node: Json): Json {
  const keyword = Array.isArray(node.oneOf) ? 'oneOf' : 'anyOf';
  const branches = node[keyword];
  if (!Array.isArray(branches) || branches.length < 2) return node;
  const closed = branches.every(
    (branch) =>
      isObject(branch) &&
      branch.type === 'object' &&
      branch.additionalProperties === false &&
      isObject(branch.properties) &&
      Object.keys(branch).every((key) => ['type', 'properties', 'required', 'additionalProperties'].includes(key)),
  );
  if (!closed) return node;
  const objects = branches as { properties: Json; required?: string[] }[];
  const names = [...new Set(objects.flatMap((branch) => Object.keys(branch.properties)))];
  const sharedSchema = (name: string) => {
    const texts = new Set(objects.filter((branch) => name in branch.properties).map((branch) => JSON.stringify(branch.properties[name])));
    return texts.size === 1 ? objects.find((branch) => name in branch.properties)!.properties[name] : undefined;
  };
  const properties = Object.fromEntries(names.map((name) => [name, sharedSchema(name) ?? {}]));
  const required = names.filter((name) => objects.every((branch) => branch.required?.includes(name)));
  const { [keyword]: _branches, ...rest } = node;
  return {
    ...rest,
    type: 'object',
    properties,
    required,
    additionalProperties: false,
    [keyword]: mergeConstBranches(
      objects.map((branch) => {
        const own = Object.fromEntries(Object.entries(branch.properties).filter(([name]) => sharedSchema(name) === undefined));
        const extra = (branch.required ?? []).filter((name) => !required.includes(name));
        return { ...(Object.keys(own).length ? { properties: own } : {}), ...(extra.length ? { required: extra } : {}) };
      }),
    ),
  };
}

/**
 * Factored branches where those that only fix one property to a value
 * (`{properties: {status: {const: 'draft'}}}`) are written as one branch of
 * the values (`{properties: {status: {enum: ['draft', 'enriching']}}}`), at
 * the first one's place: the same instances match, and as they fix the same
 * property to different values, never two branches at once.
 */
function mergeConstBranches(branches: Json[]): Json[] {
  const constOnly = (branch: Json): [string, Json] | undefined => {
    if (Object.keys(branch).length !== 1 || !isObject(branch.properties)) return undefined;
    const entries = Object.entries(branch.properties);
    const [name, schema] = entries[0] ?? [];
    return entries.length === 1 && isObject(schema) && 'const' in schema && !('enum' in schema) ? [name!, schema] : undefined;
  };
  const groups = new Map<string, { at: number; name: string; rest: Json; values: unknown[] }>();
  const merged: (Json | string)[] = [];
  for (const branch of branches) {
    const found = constOnly(branch);
    if (!found) {
      merged.push(branch);
      continue;
    }
    const [name, { const: value, ...rest }] = found;
    const key = JSON.stringify([name, rest]);
    const group = groups.get(key);
    if (group) group.values.push(value);
    else {
      groups.set(key, { at: merged.length, name, rest, values: [value] });
      merged.push(key);
    }
  }
  return merged.map((entry) => {
    if (typeof entry !== 'string') return entry;
    const { name, rest, values } = groups.get(entry)!;
    return { properties: { [name]: values.length === 1 ? { ...rest, const: values[0] } : { ...rest, enum: values } } };
  });
}

/**
 * A regular expression with each character class of plain letters and digits
 * (`[123456789ABC…xyz]`, the ID alphabet) written as ranges (`[1-9A-HJ-NP-Za-km-z]`): the same set of characters,
 * in about a third of the characters. Any other part is kept as it is.
 */
export function compactPattern(pattern: string): string {
  return pattern.replace(/\[([0-9A-Za-z]{4,})\]/g, (_, members: string) => {
    const points = [...new Set([...members].map((char) => char.codePointAt(0)!))].sort((a, b) => a - b);
    let out = '';
    for (let start = 0; start < points.length;) {
      let end = start;
      while (end + 1 < points.length && points[end + 1] === points[end]! + 1) end++;
      const run = points.slice(start, end + 1).map((point) => String.fromCodePoint(point));
      out += run.length >= 3 ? `${run[0]}-${run[run.length - 1]}` : run.join('');
      start = end + 1;
    }
    return `[${out}]`;
  });
}

/**
 * A description without what only an HTTP request can use: a tool's arguments
 * are one JSON object and a tool call sends no header, so the sentences and
 * parentheses about the form media types (`urlencoded`, `multipart`) go.
 * Everything else is kept word for word.
 */
export function jsonOnlyText(text: string): string {
  return text
    .replace(/ \((?:[^()]|\([^()]*\))*\burlencoded\b(?:[^()]|\([^()]*\))*\)/g, '')
    .split(/(?<=[.!?])(?<!\b(?:e\.g|i\.e)\.)\s+(?=[A-Z`(]|urlencoded)/)
    .filter((sentence) => !/\burlencoded\b/.test(sentence))
    .join(' ');
}

/** Whether a description only lists its node's enum values (`` `a`, `b` or `c`. ``), which the enum says already. */
function onlyListsEnum(description: string, values: unknown): boolean {
  if (!Array.isArray(values)) return false;
  const rest = values.reduce<string>((text, value) => text.split(`\`${String(value)}\``).join(''), description);
  return rest.replace(/\b(or|and)\b|[,.;\s]/g, '') === '';
}

/** Keywords that apply to every instance, whatever its type: a schema with one cannot take `null` by its `type`. */
const ANY_TYPE_KEYWORDS = ['enum', 'const', 'oneOf', 'anyOf', 'allOf', 'not', '$ref', 'if'];

/**
 * `anyOf: [S, {type: 'null'}]` (a nullable field, as the document writes it)
 * as S with `type: [T, 'null']`: the same meaning (S's other keywords apply
 * to T only), in about half the characters. Any other node is returned as it is.
 */
function mergeNullable(node: Json): Json {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2 || Object.keys(node).length !== 1) return node;
  const nullAt = branches.findIndex((branch) => isObject(branch) && branch.type === 'null' && Object.keys(branch).length === 1);
  const other = branches[1 - nullAt];
  if (nullAt < 0 || !isObject(other) || typeof other.type !== 'string' || ANY_TYPE_KEYWORDS.some((key) => key in other)) return node;
  return { ...other, type: [other.type, 'null'] };
}

/**
 * A tool's JSON Schema made compact (keeps `tools/list` inside its 64 KB):
 * the document's examples and OpenAPI-only keywords dropped, the date-time
 * `pattern` beside `format: date-time` dropped (the format says it), a
 * `oneOf` of closed objects factored ({@link factorOneOf}), a nullable field
 * written as a type list ({@link mergeNullable}), and each
 * subschema of {@link SHARED_SUBSCHEMA_MIN_CHARS} characters or more that
 * occurs twice or more written once under `$defs` and referenced.
 * @param options.output - an output schema: it checks the answer's shape, so the fields' descriptions
 *   (described in the API reference), the bounds of values and `additionalProperties: false` are dropped too. Inputs keep both: the agent
 *   fills them.
 */
export function compactSchema(schema: Json, { output = false }: { output?: boolean } = {}): Json {
  const trimmed = (node: unknown, names = false): unknown => {
    if (Array.isArray(node)) return node.map((item) => trimmed(item));
    if (!isObject(node)) return node;
    const entries = Object.entries(node).filter(
      ([key, value]) =>
        names ||
        (!DOCUMENT_ONLY_KEYWORDS.has(key) &&
          !(key === 'pattern' && node.format === 'date-time') &&
          !(key === 'description' && typeof value === 'string' && (output || onlyListsEnum(value, node.enum))) &&
          // `z.int()`'s safe-integer bounds: every integer an agent writes is inside them.
          !(key === 'maximum' && value === Number.MAX_SAFE_INTEGER) &&
          !(key === 'minimum' && value === Number.MIN_SAFE_INTEGER) &&
          !(output && BOUND_KEYWORDS.has(key))),
    );
    const edited = (key: string, value: unknown): unknown =>
      names
        ? value
        : key === 'pattern' && typeof value === 'string'
          ? compactPattern(value)
          : key === 'description' && typeof value === 'string'
            ? jsonOnlyText(value)
            : value;
    const kept = Object.fromEntries(entries.map(([key, value]) => [key, trimmed(edited(key, value), !names && SCHEMA_MAPS.has(key))]));
    return names ? kept : mergeNullable(factorOneOf(kept));
  };
  // An output schema checks the answer's shape: the server wrote no other field, so "no other field" is not said;
  // and a `const` or an `enum` of strings says the type already.
  const opened = (node: unknown, names = false): unknown => {
    if (Array.isArray(node)) return node.map((item) => opened(item));
    if (!isObject(node)) return node;
    const typedByValues =
      node.type === 'string' &&
      (typeof node.const === 'string' || (Array.isArray(node.enum) && node.enum.every((value) => typeof value === 'string')));
    const entries = Object.entries(node).filter(
      ([key, value]) => names || !((key === 'additionalProperties' && value === false) || (key === 'type' && typedByValues)),
    );
    return Object.fromEntries(entries.map(([key, value]) => [key, opened(value, !names && SCHEMA_MAPS.has(key))]));
  };
  const root = (output ? factorSharedFields(opened(trimmed(schema)) as Json) : trimmed(schema)) as Json;
  const counts = new Map<string, number>();
  const count = (node: unknown, names = false): void => {
    if (Array.isArray(node)) return node.forEach((item) => count(item));
    if (!isObject(node)) return;
    if (!names) {
      const text = JSON.stringify(node);
      if (text.length >= SHARED_SUBSCHEMA_MIN_CHARS) counts.set(text, (counts.get(text) ?? 0) + 1);
    }
    for (const [key, value] of Object.entries(node)) count(value, !names && SCHEMA_MAPS.has(key));
  };
  for (const [key, value] of Object.entries(root)) count(value, SCHEMA_MAPS.has(key));
  const defs: Json = {};
  const defNames = new Map<string, string>();
  const shared = (node: unknown, names = false): unknown => {
    if (Array.isArray(node)) return node.map((item) => shared(item));
    if (!isObject(node)) return node;
    const inner = () =>
      Object.fromEntries(Object.entries(node).map(([key, value]) => [key, shared(value, !names && SCHEMA_MAPS.has(key))]));
    const text = JSON.stringify(node);
    if (names || !worthSharing(text.length, counts.get(text) ?? 0)) return inner();
    let name = defNames.get(text);
    if (!name) {
      name = `s${defNames.size + 1}`;
      defNames.set(text, name);
      defs[name] = inner();
    }
    return { $ref: `#/$defs/${name}` };
  };
  const compacted = Object.fromEntries(Object.entries(root).map(([key, value]) => [key, shared(value, SCHEMA_MAPS.has(key))]));
  return defNames.size > 0 ? { ...compacted, $defs: { ...(isObject(compacted.$defs) ? compacted.$defs : {}), ...defs } } : compacted;
}

/** Fewest characters {@link factorSharedFields} must save to write a base. */
const BASE_MIN_SAVING_CHARS = 100;

/**
 * An output schema whose objects share fields (the same name and schema, required or not in both) written with
 * those fields once, as a base under `$defs` (`b1`, `b2`, …), and each of those objects as `allOf: [base]` plus its
 * own fields: the campaign's fields in each event that carries a campaign. The same answers validate, because an
 * output schema's objects are open (no `additionalProperties: false`), so `properties` and `required` add up across
 * `allOf`. Only objects made of `type: "object"`, `properties` and `required` take part, and a base is written
 * only when it saves {@link BASE_MIN_SAVING_CHARS} characters or more.
 */
function factorSharedFields(schema: Json): Json {
  const root = JSON.parse(JSON.stringify(schema)) as Json;
  const bases: Json = {};
  const fieldsOf = (node: Json) => {
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    return new Map(
      Object.entries(node.properties as Json).map(([name, property]) => [
        `${name}\u0000${required.has(name)}\u0000${JSON.stringify(property)}`,
        { name, property, required: required.has(name) },
      ]),
    );
  };
  for (let round = 1; round <= 4; round++) {
    const candidates: Json[] = [];
    const collect = (node: unknown, names = false): void => {
      if (Array.isArray(node)) return node.forEach((item) => collect(item));
      if (!isObject(node)) return;
      if (
        !names &&
        node.type === 'object' &&
        isObject(node.properties) &&
        Object.keys(node).every((key) => ['type', 'properties', 'required'].includes(key))
      )
        candidates.push(node);
      for (const [key, value] of Object.entries(node)) collect(value, !names && SCHEMA_MAPS.has(key));
    };
    collect(root, false);
    const fields = candidates.map(fieldsOf);
    // The fields two objects share, written once for every object that has them all: the choice that saves most.
    // Each member gains `"allOf":[{"$ref":"#/$defs/bN"}]` (about 30 characters); the base adds its name and braces.
    let best: { keys: string[]; group: Json[]; saving: number } | undefined;
    for (let i = 0; i < fields.length; i++)
      for (let j = i + 1; j < fields.length; j++) {
        const keys = [...fields[i]!.keys()].filter((key) => fields[j]!.has(key));
        if (keys.length < 2) continue;
        const chars = keys.reduce((sum, key) => sum + key.length, 0);
        const group = candidates.filter((_, index) => keys.every((key) => fields[index]!.has(key)));
        const saving = (group.length - 1) * chars - group.length * 30 - 40;
        if (saving > (best?.saving ?? 0)) best = { keys, group, saving };
      }
    if (!best || best.saving < BASE_MIN_SAVING_CHARS) break;
    const { keys, group } = best;
    const shared = keys.map((key) => fields[candidates.indexOf(group[0]!)]!.get(key)!);
    const name = `b${round}`;
    bases[name] = {
      type: 'object',
      properties: Object.fromEntries(shared.map((field) => [field.name, field.property])),
      required: shared.filter((field) => field.required).map((field) => field.name),
    };
    const sharedNames = new Set(shared.map((field) => field.name));
    for (const node of group) {
      const properties = Object.fromEntries(Object.entries(node.properties as Json).filter(([field]) => !sharedNames.has(field)));
      const required = (Array.isArray(node.required) ? (node.required as string[]) : []).filter((field) => !sharedNames.has(field));
      for (const key of Object.keys(node)) delete node[key];
      Object.assign(node, {
        allOf: [{ $ref: `#/$defs/${name}` }],
        ...(Object.keys(properties).length ? { properties } : {}),
        ...(required.length ? { required } : {}),
      });
    }
  }
  return Object.keys(bases).length ? { ...root, $defs: bases } : root;
}

/** Smallest subschema, in characters of JSON, that {@link compactSchema} writes once when repeated. */
export const SHARED_SUBSCHEMA_MIN_CHARS = 26;

/**
 * Whether a subschema of `chars` characters met `times` times is shorter written once under `$defs` and
 * referenced: each use becomes `{"$ref":"#/$defs/sN"}` (about 21 characters) and the definition adds its name.
 */
function worthSharing(chars: number, times: number): boolean {
  const reference = 21;
  const definition = chars + 8;
  return times >= 2 && chars >= SHARED_SUBSCHEMA_MIN_CHARS && times * chars > times * reference + definition;
}

/**
 * An input schema without the descriptions of the fields the tool's description already tells how to fill: a
 * top-level field it names as where a value goes ("Pass `nextCursor` unchanged as `cursor`…"), so the tool says it
 * once. Every other description is kept.
 */
function givenByDescription(input: Json, description: string): Json {
  if (!isObject(input.properties)) return input;
  const properties = Object.fromEntries(
    Object.entries(input.properties).map(([name, schema]) => {
      if (!isObject(schema) || !description.includes(`as \`${name}\``)) return [name, schema];
      const { description: _given, ...rest } = schema;
      return [name, rest];
    }),
  );
  return { ...input, properties };
}

/**
 * A tool's description: the operation's, cut to {@link MAX_TOOL_DESCRIPTION_CHARS} at a sentence end. The summary is
 * the tool's `title`, beside it in `tools/list`, so it is not repeated.
 */
function toolDescription(description: string): string {
  if (description.length <= MAX_TOOL_DESCRIPTION_CHARS) return description;
  const cut = description.slice(0, MAX_TOOL_DESCRIPTION_CHARS - 1);
  const end = cut.lastIndexOf('. ');
  return end > 0 ? cut.slice(0, end + 1) : `${cut}…`;
}

/**
 * The schemas of an operation as the OpenAPI document publishes them, with
 * the components inlined, made compact ({@link compactSchema}): the JSON
 * request body and the success's `data`.
 * @throws Error when the document lacks the operation (a programming error).
 */
export function operationSchemas(
  document: ReturnType<typeof buildOpenApiDocument>,
  operation: Operation,
): { input: JsonSchema; output: JsonSchema; summary: string; description: string } {
  const post = (document.paths as Record<string, any>)?.[operation.path]?.post;
  if (!post) throw new Error(`${operation.operationId}: not in the OpenAPI document`);
  const components = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const input = inlineRefs(post.requestBody.content['application/json'].schema, components) as Record<string, unknown>;
  const envelope = inlineRefs(post.responses['200'].content['application/json'].schema, components) as {
    properties: { data: Record<string, unknown> };
  };
  const description = jsonOnlyText(documented(operation).description);
  return {
    // MCP wants an object at the top: a oneOf of objects (create) is one.
    input: givenByDescription(compactSchema({ type: 'object', ...input }), description) as JsonSchema,
    output: compactSchema({ type: 'object', ...envelope.properties.data }, { output: true }) as JsonSchema,
    summary: String(post.summary),
    // The operation's own text: the document adds what only HTTP requests use (the `Idempotency-Key` header; a tool
    // call sends none), and the form media types' notes go too.
    description,
  };
}

/**
 * The MCP tools of `operations` (the tool operations of the route list, infra/routes.ts `MCP_ROUTES`, in
 * its order), built from the OpenAPI document, with the operation each calls.
 */
export function buildMcpTools(operations: readonly Operation[]): McpToolBinding[] {
  const document = buildOpenApiDocument(operations);
  return operations.map((operation) => {
    const annotations = toolAnnotations(operation);
    const schemas = operationSchemas(document, operation);
    const name = toolName(operation.operationId);
    return {
      operation,
      tool: {
        name,
        title: schemas.summary,
        description: toolDescription(schemas.description),
        inputSchema: schemas.input,
        outputSchema: schemas.output,
        annotations: listedAnnotations(annotations),
        ...(TASK_TOOLS.has(operation.operationId) ? { execution: { taskSupport: 'optional' as const } } : {}),
      },
    };
  });
}

/** Server name and version agents see (`initialize`, the server card). */
export const MCP_SERVER_INFO = { name: 'campaign-enrichment', title: 'Campaign Enrichment API', version: '1.0.0' } as const;

/** The path of the MCP endpoint (Streamable HTTP, stateless). */
export const MCP_PATH = '/mcp';
/** Where the MCP server card is served (the MCP server-card proposal's well-known path). */
export const SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';
/** The RFC 9727 API catalog. */
export const API_CATALOG_PATH = '/.well-known/api-catalog';
/** The llms.txt index. */
export const LLMS_TXT_PATH = '/llms.txt';

/**
 * The MCP server card: who the server is, where it listens, how it
 * authenticates, and its tools exactly as `tools/list` answers them.
 */
export function buildServerCard(serverUrl: string, tools: readonly McpTool[]) {
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json',
    version: '1.0',
    protocolVersion: '2025-11-25',
    serverInfo: MCP_SERVER_INFO,
    description:
      'Create campaigns from account lists, quote and launch paid enrichment (asks before it spends), follow progress, cancel with an exact refund, export results.',
    documentationUrl: `${serverUrl}/docs`,
    transport: { type: 'streamable-http', endpoint: MCP_PATH },
    remotes: [{ type: 'streamable-http', url: `${serverUrl}${MCP_PATH}` }],
    packages: [
      {
        registryType: 'npm',
        identifier: '@campaign-enrichment/client',
        transport: { type: 'stdio' },
        runtimeHint: 'npx',
        environmentVariables: [
          { name: 'CAMPAIGN_ENRICHMENT_API_KEY', isRequired: true, isSecret: true },
          { name: 'CAMPAIGN_ENRICHMENT_API_URL', isRequired: true },
        ],
      },
    ],
    authentication: {
      required: true,
      schemes: ['bearer'],
      description: 'An API key as bearer credential; a test key (cek_test_…) acts on the test twin.',
    },
    capabilities: { tools: { listChanged: false } },
    tools,
  };
}

/** The api-catalog (RFC 9727): a linkset naming the OpenAPI document, the reference page and the health check. */
export function buildApiCatalog(serverUrl: string) {
  return {
    linkset: [
      {
        anchor: `${serverUrl}/`,
        'service-desc': [{ href: `${serverUrl}/openapi.json`, type: 'application/openapi+json' }],
        'service-doc': [{ href: `${serverUrl}/docs`, type: 'text/html' }],
        status: [{ href: `${serverUrl}/health`, type: 'application/json' }],
        'service-meta': [{ href: `${serverUrl}${SERVER_CARD_PATH}`, type: 'application/json' }],
      },
    ],
  };
}

/** `/llms.txt` (llmstxt.org): what the API is, and links an agent follows. */
export function buildLlmsTxt(serverUrl: string, tools: readonly McpTool[]): string {
  return [
    '# Campaign Enrichment API',
    '',
    '> A paid B2B JSON API: create campaigns from account (company) IDs, quote and launch enrichment (credits are charged per eligible account), poll progress, export contacts as CSV. Every operation is a POST with an API key as bearer.',
    '',
    'Agents connect through the MCP server (Streamable HTTP, stateless) or call the HTTP API directly. A test key (`cek_test_…`) acts on a test twin with a deterministic warehouse: nothing it does spends real credits.',
    '',
    '## Docs',
    '',
    `- [API reference](${serverUrl}/docs): every operation, its fields and its errors`,
    `- [OpenAPI document](${serverUrl}/openapi.json): the contract, generated from the server's schemas`,
    `- [MCP server card](${serverUrl}${SERVER_CARD_PATH}): the MCP endpoint (${serverUrl}${MCP_PATH}) and its tools`,
    `- [API catalog](${serverUrl}${API_CATALOG_PATH}): RFC 9727 linkset`,
    '',
    '## MCP tools',
    '',
    ...tools.map((tool) => `- ${tool.name}: ${tool.title}`),
    '',
    '## Optional',
    '',
    `- [Health](${serverUrl}/health)`,
    `- [Support](${serverUrl}${SUPPORT.guidePath}): ${SUPPORT.email}`,
    '',
  ].join('\n');
}
