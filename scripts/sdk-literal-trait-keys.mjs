/**
 * Makes the AWS SDK clients' schemas tree-shakable by esbuild (run by `npm
 * install`/`npm ci` as `postinstall`; idempotent).
 *
 * Since @aws-sdk 3.930 every client ships its operation schemas as one module
 * (`dist-es/schemas/schemas_0.js`) whose trait objects use computed keys,
 * `{ [_e]: _c }` with `const _e = "error"`. esbuild cannot prove a computed key
 * free of side effects, so it keeps every schema of the service: 66 KB of
 * S3 schemas in a function that sends five S3 commands (aws-sdk-js-v3 issue
 * #7607). This rewrites each computed key whose name is one of the module's
 * own string constants into that string literal, `{ "error": _c }`: the same
 * object, the fix of smithy-typescript pull request #1889 (not released as of
 * @aws-sdk/client-s3 3.1173). Only the ESM builds (`dist-es`) change, which
 * the Lambda bundles read (BUNDLING mainFields `module`); Node itself loads
 * `dist-cjs`. Remove this script once the SDK's generated code has literal keys.
 *
 * Usage: `node scripts/sdk-literal-trait-keys.mjs [node_modules]`; prints what it changed, unless
 * npm runs it at its loglevel `error` or `silent` (this project's .npmrc: `npm ci` prints nothing to interpret).
 */
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Rewrites `[_name]:` into `"value":` for every `const _name = "value";` of the module.
 * @param {string} source - a generated schemas module.
 * @returns {{ source: string, replaced: number }}
 */
export function literalTraitKeys(source) {
  const constants = new Map();
  for (const match of source.matchAll(/^const (_[A-Za-z0-9_]+) = ("(?:[^"\\\n]|\\.)*");$/gm)) constants.set(match[1], match[2]);
  let replaced = 0;
  const rewritten = source.replace(/\[(_[A-Za-z0-9_]+)\]:/g, (whole, name) => {
    const literal = constants.get(name);
    if (literal === undefined) return whole;
    replaced += 1;
    return `${literal}:`;
  });
  return { source: rewritten, replaced };
}

const root = path.resolve(process.argv[2] ?? 'node_modules');
const quiet = ['error', 'silent'].includes(process.env.npm_config_loglevel ?? '');
const scope = path.join(root, '@aws-sdk');
if (existsSync(scope)) {
  for (const pkg of readdirSync(scope).filter((name) => name.startsWith('client-'))) {
    const dir = path.join(scope, pkg, 'dist-es', 'schemas');
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).filter((name) => /^schemas_\d+\.js$/.test(name))) {
      const target = path.join(dir, file);
      const { source, replaced } = literalTraitKeys(readFileSync(target, 'utf8'));
      if (replaced === 0) continue;
      writeFileSync(target, source);
      if (!quiet) console.log(`sdk-literal-trait-keys: @aws-sdk/${pkg}/dist-es/schemas/${file}: ${replaced} computed keys made literal`);
    }
  }
}
