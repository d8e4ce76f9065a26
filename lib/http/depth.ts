/**
 * Nesting limits of request bodies (issue #19): a body nested deeper than
 * {@link MAX_NESTING_DEPTH} levels is refused with 400 `invalid_request`
 * before anything recursive (JSON.parse's reviver, form nesting, schema
 * validation) touches it, so a hostile body costs one linear scan and never
 * exhausts the stack. The same code runs locally and in AWS (the pipeline).
 */

/** Deepest nesting a body may have: JSON objects/arrays, or bracket segments of a form field name plus one. */
export const MAX_NESTING_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Finds where a JSON text first nests deeper than `max` levels, scanning the
 * raw text once (brackets inside strings do not count; the text need not be
 * valid JSON).
 *
 * @param text - the raw JSON body.
 * @param max - deepest nesting allowed (`{}` and `[]` each count one level).
 * @returns `undefined` when the text stays within `max`; otherwise the
 *   top-level member under which the limit was passed (`'body'` when the
 *   top level is not an object or the name cannot be read).
 */
export function jsonNestingViolation(text: string, max: number = MAX_NESTING_DEPTH): string | undefined {
  let depth = 0;
  let inString = false;
  let stringStart = 0;
  let topLevelObject = false;
  let lastTopLevelString: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        if (depth === 1 && topLevelObject) lastTopLevelString = text.slice(stringStart, i + 1);
      }
    } else if (c === QUOTE) {
      inString = true;
      stringStart = i;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === 0) topLevelObject = c === OPEN_BRACE;
      if (++depth > max) return memberName(lastTopLevelString);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}

function memberName(quoted: string | undefined): string {
  if (quoted === undefined) return 'body';
  try {
    const name = JSON.parse(quoted) as unknown;
    return typeof name === 'string' && name !== '' ? name : 'body';
  } catch {
    return 'body';
  }
}

/**
 * Finds a form field name whose bracket path nests deeper than `max` levels
 * (`filters[a][b]` nests 3 deep, as `{"filters":{"a":{"b":…}}}` does).
 *
 * @param names - the parsed form's field names.
 * @returns the base name (before the first `[`) of the first offending field, or `undefined`.
 */
export function formNestingViolation(names: Iterable<string>, max: number = MAX_NESTING_DEPTH): string | undefined {
  for (const name of names) {
    let depth = 1;
    for (let i = 0; i < name.length; i++) {
      if (name.charCodeAt(i) === OPEN_BRACKET && ++depth > max) {
        const base = name.slice(0, name.indexOf('['));
        return base === '' ? 'body' : base;
      }
    }
  }
  return undefined;
}
