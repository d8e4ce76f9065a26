/**
 * Form bodies (`application/x-www-form-urlencoded`, `multipart/form-data`):
 * turning parsed fields into the same shape a JSON body has (docs/pagination.md).
 *
 * - `filters[status]=draft` becomes `{ filters: { status: 'draft' } }`;
 *   a repeated key becomes an array in arrival order.
 * - Multipart parts without a file name become strings; parts with one
 *   become {@link UploadedFile}s.
 * - Form values arrive as text: {@link formSchemaOf} derives, from an
 *   operation's JSON schema, a schema that coerces numbers, booleans,
 *   nulls and single values of array fields.
 */
import * as z from 'zod/mini';
import { InvalidRequestError } from '../errors';

/** A multipart file part. `content` holds the raw bytes. */
export interface UploadedFile {
  kind: 'file';
  filename: string;
  mimetype: string;
  content: Buffer;
}

/** Attachment shape produced by `@middy/http-multipart-body-parser` for every part (see pipeline). */
interface MultipartAttachment {
  filename?: string;
  mimetype: string;
  content: Buffer;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Splits `filters[status]` into `['filters', 'status']`; `ids[]` into `['ids']`. */
function keyPath(key: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return [key];
  const rest = [...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!).filter((part) => part !== '');
  return [match[1]!, ...rest];
}

/**
 * Nests flat form fields by their bracket paths.
 * @throws InvalidRequestError for prototype keys or a key used both as a value and as an object.
 */
export function nestFormFields(fields: Record<string, unknown>): Record<string, unknown> {
  const isNode = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && !isUploadedFile(value);
  const conflict = (path: string[]) =>
    new InvalidRequestError('The request body is invalid.', [`${path.join('.')}: conflicting form fields`]);
  // Null-prototype nodes: field names such as `valueOf` are plain keys.
  const root: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(fields)) {
    const path = keyPath(key);
    const forbidden = path.find((part) => FORBIDDEN_KEYS.has(part));
    if (forbidden) throw new InvalidRequestError('The request body is invalid.', [`${key}: forbidden property name`]);
    let node = root;
    for (const part of path.slice(0, -1)) {
      const next = Object.hasOwn(node, part) ? node[part] : undefined;
      if (next === undefined) node = node[part] = Object.create(null) as Record<string, unknown>;
      else if (isNode(next)) node = next;
      else throw conflict(path);
    }
    const leaf = path.at(-1)!;
    const existing = Object.hasOwn(node, leaf) ? node[leaf] : undefined;
    if (existing === undefined) node[leaf] = value;
    else if (isNode(existing)) throw conflict(path);
    else node[leaf] = [...(Array.isArray(existing) ? existing : [existing]), ...(Array.isArray(value) ? value : [value])];
  }
  return root;
}

/**
 * Turns the multipart parser's attachments into strings (plain fields) and
 * {@link UploadedFile}s (file parts), restoring arrival order of repeated keys.
 */
export function multipartToFields(parsed: Record<string, MultipartAttachment | MultipartAttachment[]>): Record<string, unknown> {
  const convert = (part: MultipartAttachment): string | UploadedFile =>
    part.filename === undefined
      ? part.content.toString('utf8')
      : { kind: 'file', filename: part.filename, mimetype: part.mimetype, content: part.content };
  // Null prototype: a part named `__proto__` stays a key (and is refused by nestFormFields).
  const fields: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(parsed)) {
    // The parser puts the newest of repeated parts first.
    fields[key] = Array.isArray(value) ? [...value].reverse().map(convert) : convert(value);
  }
  return fields;
}

/** The boundary parameter of a multipart content type, quoted or not. */
export function multipartBoundary(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/**
 * The `charset` parameter of a Content-Type header, lower-cased (quotes
 * removed), or undefined when the header declares none.
 * @example contentTypeCharset('application/json; charset="ISO-8859-1"') // 'iso-8859-1'
 */
export function contentTypeCharset(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^\s;]*))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? '').toLowerCase() : undefined;
}

/** The charsets a body may declare: bodies are read as UTF-8 (docs/errors.md). */
export const ACCEPTED_CHARSETS: readonly string[] = ['utf-8', 'utf8'];

/**
 * Checks the framing of a multipart body before it reaches the parser: a
 * delimiter first, the closing delimiter last, and a blank line after every
 * part's headers. busboy hangs on a part without that blank line and throws
 * outside any handler on a body cut short; such bodies are refused here.
 * @returns a description of the first framing fault, or undefined when well framed.
 */
export function multipartFramingFault(body: Buffer, boundary: string): string | undefined {
  const text = body.toString('latin1');
  const delimiter = `--${boundary}`;
  const first = text.indexOf(delimiter);
  if (first === -1) return 'no boundary delimiter';
  // A form with no fields: the first delimiter is the closing one.
  if (text.startsWith(`${delimiter}--`, first))
    return text.slice(first + delimiter.length + 2).trim() === '' ? undefined : 'data after the closing delimiter';
  const closing = text.lastIndexOf(`\r\n${delimiter}--`);
  if (closing === -1 || text.slice(closing + delimiter.length + 4).trim() !== '') return 'missing or misplaced closing delimiter';
  const parts = text.slice(first + delimiter.length, closing).split(`\r\n${delimiter}`);
  for (const part of parts) {
    if (!part.startsWith('\r\n')) return 'a delimiter is not followed by a line break';
    if (!part.slice(2).includes('\r\n\r\n') && !part.startsWith('\r\n\r\n')) return "a part's headers are not followed by a blank line";
  }
  return undefined;
}

/** True for an {@link UploadedFile}. */
export const isUploadedFile = (value: unknown): value is UploadedFile =>
  typeof value === 'object' &&
  value !== null &&
  (value as UploadedFile).kind === 'file' &&
  Buffer.isBuffer((value as UploadedFile).content);

/**
 * Plain decimal text only, exactly as the OpenAPI document's text patterns
 * state it (issue #34): digits for an integer (`-?\d+`), digits with an
 * optional fraction for a number. Anything else — surrounding space, `+1`,
 * `1.0` for an integer, `0x10`, `1e2` — stays text and fails validation.
 */
const toNumber = (value: unknown) => (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value);
const toInteger = (value: unknown) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);
/** A received form value as an issue line shows it: text quoted (JSON), anything else by its kind. */
const formValueOf = (value: unknown) =>
  typeof value === 'string'
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
    : Array.isArray(value)
      ? 'several values'
      : typeof value;
const toBoolean = (value: unknown) => (value === 'true' ? true : value === 'false' ? false : value);
const toNullable = (value: unknown) => (value === '' || value === 'null' ? null : value);
const toArray = (value: unknown) => (value === undefined || Array.isArray(value) ? value : [value]);

/** `fn` applied to the input before `schema` parses it (classic zod's `z.preprocess`). */
const preprocess = (fn: (value: unknown) => unknown, schema: z.core.$ZodType): z.ZodMiniType => z.pipe(z.transform(fn), schema);

/** The form variant of an array schema, its own checks (min/max) kept; a single value is not wrapped here. */
function formArrayOf(schema: z.core.$ZodArray): z.ZodMiniType {
  const rebuilt = z.array(formSchemaOf(schema._zod.def.element));
  const checks = schema._zod.def.checks;
  return checks?.length ? rebuilt.check(...(checks as z.core.$ZodCheck<any>[])) : rebuilt;
}

/**
 * Derives the form variant of a JSON schema: same rules, with text coerced
 * where the JSON schema expects a number, boolean, null or array. Takes
 * classic or mini zod schemas (it reads only zod core's definitions) and
 * builds with `zod/mini`.
 */
export function formSchemaOf(schema: z.core.$ZodType): z.ZodMiniType {
  const def = schema._zod.def;
  // Rebuilt containers keep their own checks (min/max, refinements).
  const withChecks = <T extends z.ZodMiniType>(rebuilt: T): T =>
    def.checks?.length ? (rebuilt.check(...(def.checks as z.core.$ZodCheck<any>[])) as T) : rebuilt;
  switch (def.type) {
    case 'object': {
      const shape = Object.fromEntries(
        Object.entries((def as z.core.$ZodObjectDef).shape).map(([key, field]) => [key, formSchemaOf(field)]),
      );
      return withChecks(z.strictObject(shape));
    }
    case 'optional':
      return z.optional(formSchemaOf((def as z.core.$ZodOptionalDef).innerType));
    case 'default': {
      const { innerType, defaultValue } = def as z.core.$ZodDefaultDef;
      return z._default(formSchemaOf(innerType), defaultValue as never);
    }
    case 'nullable':
      return preprocess(toNullable, z.nullable(formSchemaOf((def as z.core.$ZodNullableDef).innerType)));
    case 'number':
    case 'int':
      return preprocess((def as { format?: string }).format?.includes('int') || def.type === 'int' ? toInteger : toNumber, schema);
    case 'boolean':
      // A form sends text: name the two texts that work (`hasEmail=1` is not one of them).
      return preprocess(
        toBoolean,
        z.boolean({ error: (issue) => `Invalid input: expected true or false, received ${formValueOf(issue.input)}` }),
      );
    case 'array':
      return preprocess(toArray, formArrayOf(schema as z.core.$ZodArray));
    case 'union': {
      // One value or a list (`filters[status]`): a single form value is the
      // single member's to match, so list members do not wrap it (and a bad
      // value is reported as the one value it is, not as item [0]).
      const options = (def as z.core.$ZodUnionDef).options;
      const hasSingle = options.some((option) => option._zod.def.type !== 'array');
      return z.union(
        options.map((option) =>
          hasSingle && option._zod.def.type === 'array' ? formArrayOf(option as z.core.$ZodArray) : formSchemaOf(option),
        ) as unknown as [z.core.$ZodType, ...z.core.$ZodType[]],
      );
    }
    default:
      // Classic and mini schemas both parse; the type is mini's.
      return schema as z.ZodMiniType;
  }
}
