/**
 * DynamoDB expressions built from values instead of hand-written strings:
 * a {@link Change} (attributes to set, increment or remove) becomes an
 * UpdateExpression, and named {@link Clause}s combine into a
 * ConditionExpression. Attribute names always go through `#name`
 * placeholders, so reserved words (`status`, `name`, `token`) need no care.
 */

/** A condition (or part of one) with its own placeholders; value placeholders start with `:c_`. */
export interface Clause {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** Top-level attributes an update sets, increments (by a signed number; a missing attribute counts as 0) or removes. */
export interface Change {
  set?: Record<string, unknown>;
  increment?: Record<string, number>;
  remove?: readonly string[];
}

/** The expression members of an UpdateItem (or a transaction's Update). */
export interface UpdateExpressionParts {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** Every clause must hold. */
export function and(...clauses: Clause[]): Clause {
  return {
    expression: clauses.map((clause) => `(${clause.expression})`).join(' AND '),
    names: Object.assign({}, ...clauses.map((clause) => clause.names ?? {})),
    values: Object.assign({}, ...clauses.map((clause) => clause.values ?? {})),
  };
}

/** One change made of several (later ones win on the same attribute; an attribute set is not also removed). */
export function merge(...changes: Change[]): Change {
  const set = Object.assign({}, ...changes.map((change) => change.set ?? {})) as Record<string, unknown>;
  const increment = Object.assign({}, ...changes.map((change) => change.increment ?? {})) as Record<string, number>;
  const remove = [...new Set(changes.flatMap((change) => change.remove ?? []))].filter(
    (name) => !Object.hasOwn(set, name) && !Object.hasOwn(increment, name),
  );
  return { set, increment, remove };
}

const name = (attribute: string) => `#${attribute}`;

/**
 * The UpdateExpression of a change, with its condition.
 * @throws Error when the change is empty, or sets and increments one attribute.
 */
export function updateParts(change: Change, condition: Clause): UpdateExpressionParts & { ConditionExpression: string };
export function updateParts(change: Change, condition?: Clause): UpdateExpressionParts;
export function updateParts(change: Change, condition?: Clause): UpdateExpressionParts {
  const names: Record<string, string> = { ...(condition?.names ?? {}) };
  const values: Record<string, unknown> = { ...(condition?.values ?? {}) };
  const sets: string[] = [];
  for (const [attribute, value] of Object.entries(change.set ?? {})) {
    if (value === undefined) continue;
    names[name(attribute)] = attribute;
    values[`:s_${attribute}`] = value;
    sets.push(`${name(attribute)} = :s_${attribute}`);
  }
  for (const [attribute, delta] of Object.entries(change.increment ?? {})) {
    if (Object.hasOwn(change.set ?? {}, attribute)) throw new Error(`Attribute ${attribute} is both set and incremented`);
    names[name(attribute)] = attribute;
    values[`:i_${attribute}`] = delta;
    values[':zero'] = 0;
    sets.push(`${name(attribute)} = if_not_exists(${name(attribute)}, :zero) + :i_${attribute}`);
  }
  const removes = (change.remove ?? []).map((attribute) => {
    names[name(attribute)] = attribute;
    return name(attribute);
  });
  const clauses = [...(sets.length ? [`SET ${sets.join(', ')}`] : []), ...(removes.length ? [`REMOVE ${removes.join(', ')}`] : [])];
  if (clauses.length === 0) throw new Error('An update needs at least one attribute to change');
  return {
    UpdateExpression: clauses.join(' '),
    ...(condition ? { ConditionExpression: condition.expression } : {}),
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

/**
 * An item with a change applied, as DynamoDB would leave it: what a
 * transaction wrote, known without reading it back (its conditions held, so
 * the item was exactly `item` before).
 */
export function applyChange<T extends object>(item: T, change: Change): T {
  const next = { ...item } as Record<string, unknown>;
  for (const [attribute, value] of Object.entries(change.set ?? {})) if (value !== undefined) next[attribute] = value;
  for (const [attribute, delta] of Object.entries(change.increment ?? {}))
    next[attribute] = (typeof next[attribute] === 'number' ? (next[attribute] as number) : 0) + delta;
  for (const attribute of change.remove ?? []) delete next[attribute];
  return next as T;
}
