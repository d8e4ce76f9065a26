/**
 * An independent oracle of request validity, written from the specification
 * ("Conventions", "Endpoints", "Limits") and docs/campaigns.md, docs/errors.md, docs/pagination.md, never from the
 * zod schemas under test: given a parsed body, is it a valid request of the
 * operation? For form bodies (text values) it answers in three ways, since
 * docs/campaigns.md says numbers and booleans "arrive as text and are coerced"
 * without fixing a grammar: plain decimal text is valid, text that is no
 * number at all is invalid, and borderline text (`1.0`, ` 5`, `1e2`, `TRUE`)
 * may go either way but must never crash.
 */
import type { OperationName } from './contract';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const CAMPAIGN_ID = new RegExp(`^camp_[${BASE58}]{21}$`);
const MAX_INTEGER = 9007199254740991;
const STATUSES = ['draft', 'enriching', 'enriched', 'expired', 'tam_only'];
const CREATED_VIA = ['api', 'ui', 'data_cube'];
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const integerIn = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;

/** Fields of each operation's body (unknown properties are rejected everywhere). */
export const FIELDS: Record<OperationName, string[]> = {
  describe: [],
  create: ['name', 'accountIds', 'excludeEnrichedWithinDays'],
  update: ['campaignId', 'name', 'excludeEnrichedWithinDays'],
  get: ['campaignId'],
  list: ['filters', 'cursor', 'limit'],
  enrich: ['campaignId'],
  export: ['campaignId', 'maxContactsPerAccount', 'hasMobilePhone', 'hasEmail'],
};

/** Validity of one JSON field value (`undefined` = absent). Cursors are valid only when issued by the API: none here. */
export function jsonFieldValid(field: string, value: unknown): boolean {
  switch (field) {
    case 'campaignId':
      return typeof value === 'string' && CAMPAIGN_ID.test(value);
    case 'name':
      return typeof value === 'string' && value.trim().length >= 1 && value.trim().length <= 200;
    case 'accountIds':
      return (
        Array.isArray(value) &&
        value.length >= 1 &&
        value.length <= 100_000 &&
        value.every((id) => typeof id === 'string' && id.length >= 1 && id.length <= 128 && !CONTROL.test(id))
      );
    case 'excludeEnrichedWithinDays':
      return value === null || integerIn(value, 0, 3650);
    case 'limit':
      return integerIn(value, 1, 100);
    case 'maxContactsPerAccount':
      return integerIn(value, 0, MAX_INTEGER);
    case 'hasMobilePhone':
    case 'hasEmail':
      return typeof value === 'boolean';
    case 'cursor':
      return false;
    case 'filters': {
      if (!isPlainObject(value)) return false;
      const oneOrMany = (v: unknown, allowed: string[]) =>
        v === undefined ||
        (typeof v === 'string' && allowed.includes(v)) ||
        (Array.isArray(v) && v.length >= 1 && v.length <= 10 && v.every((x) => typeof x === 'string' && allowed.includes(x)));
      return (
        Object.keys(value).every((k) => k === 'status' || k === 'createdVia') &&
        oneOrMany(value.status, STATUSES) &&
        oneOrMany(value.createdVia, CREATED_VIA)
      );
    }
    default:
      return false;
  }
}

/** Required fields of each operation. */
const REQUIRED: Record<OperationName, string[]> = {
  describe: [],
  create: ['name', 'accountIds'],
  update: ['campaignId'],
  get: ['campaignId'],
  list: [],
  enrich: ['campaignId'],
  export: ['campaignId'],
};

/**
 * Whether a parsed JSON body is a valid request of the operation; when not,
 * the top-level fields an `invalid_request` issue line may name.
 */
export function jsonBodyValid(operation: OperationName, body: unknown): { valid: boolean; blame: string[] } {
  if (!isPlainObject(body)) return { valid: false, blame: ['body'] };
  const blame: string[] = [];
  for (const key of Object.keys(body)) {
    if (!FIELDS[operation].includes(key)) blame.push(key);
    else if (body[key] !== undefined && !jsonFieldValid(key, body[key])) blame.push(key);
  }
  for (const key of REQUIRED[operation]) if (!(key in body)) blame.push(key);
  // docs/campaigns.md: update needs name and/or excludeEnrichedWithinDays.
  if (operation === 'update' && !('name' in body) && !('excludeEnrichedWithinDays' in body)) blame.push('body');
  return { valid: blame.length === 0, blame };
}

/** Three-valued validity of a form text value. */
export type FormVerdict = 'valid' | 'invalid' | 'either';

const PLAIN_DIGITS = /^[0-9]+$/;
const NUMERIC_LOOKING = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

function formInteger(text: string, min: number, max: number, nullable: boolean): FormVerdict {
  if (nullable && (text === '' || text === 'null')) return 'either';
  if (PLAIN_DIGITS.test(text)) return integerIn(Number(text), min, max) ? 'valid' : 'invalid';
  if (NUMERIC_LOOKING.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) && n >= min && n <= max ? 'either' : 'invalid';
  }
  return 'invalid';
}

/** Validity of one form field given as text (a single occurrence). */
export function formFieldVerdict(field: string, text: string): FormVerdict {
  switch (field) {
    case 'excludeEnrichedWithinDays':
      return formInteger(text, 0, 3650, true);
    case 'limit':
      return formInteger(text, 1, 100, false);
    case 'maxContactsPerAccount':
      return formInteger(text, 0, MAX_INTEGER, false);
    case 'hasMobilePhone':
    case 'hasEmail':
      if (text === 'true' || text === 'false') return 'valid';
      return ['TRUE', 'True', 'FALSE', 'False', '1', '0', 'yes', 'no', 'on', 'off', ' true', 'true '].includes(text) ? 'either' : 'invalid';
    case 'accountIds':
      return jsonFieldValid('accountIds', [text]) ? 'valid' : 'invalid';
    case 'filters[status]':
      return STATUSES.includes(text) ? 'valid' : 'invalid';
    case 'filters[createdVia]':
      return CREATED_VIA.includes(text) ? 'valid' : 'invalid';
    default:
      return jsonFieldValid(field, text) ? 'valid' : 'invalid';
  }
}
