/** scripts/sdk-literal-trait-keys.mjs: computed trait keys become the string literals they name, nothing else changes. */
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ESM script without type declarations.
import { literalTraitKeys } from '../../scripts/sdk-literal-trait-keys.mjs';

const generated = [
  'const _e = "error";',
  'const _c = "client";',
  'const _hE = "httpError";',
  'const _q = "say \\"hi\\"";',
  'export var A$ = [-3, n0, _A, { [_e]: _c, [_hE]: 403 }, [_e, _c], [0, 0]];',
  'export var B$ = [3, n0, _B, { [_q]: 1, [_unknown]: 2 }, [], []];',
].join('\n');

describe('literalTraitKeys', () => {
  it('rewrites computed keys of known string constants, leaves arrays and unknown names alone', () => {
    const { source, replaced } = literalTraitKeys(generated);
    expect(replaced).toBe(3);
    expect(source).toContain('{ "error": _c, "httpError": 403 }, [_e, _c]');
    expect(source).toContain('{ "say \\"hi\\"": 1, [_unknown]: 2 }');
  });

  it('is idempotent and evaluates to the same objects', () => {
    const once = literalTraitKeys(generated).source;
    expect(literalTraitKeys(once)).toEqual({ source: once, replaced: 0 });
    const evaluate = (code: string) =>
      new Function('n0', '_A', '_B', `${code.replaceAll('export var', 'var')}; return [A$, B$];`)('ns', 'A', 'B');
    const withUnknown = (code: string) => `const _unknown = "u";\n${code}`;
    expect(evaluate(withUnknown(once))).toEqual(evaluate(withUnknown(generated)));
  });
});
