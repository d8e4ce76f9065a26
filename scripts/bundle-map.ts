/**
 * Rebuilds one function's bundle exactly as deployed (BUNDLING of
 * infra/constructs/service-function.ts) plus its source map, to read a stack
 * trace from CloudWatch: the deployed bundles ship neither a map nor kept
 * names, so a frame reads `index.mjs:1:<column>`.
 *
 * Usage: `npm run bundle:map -- <FunctionId | functions/<file>.ts>` at the
 * deployed commit, e.g. `npm run bundle:map -- CampaignsGet`; then look the column up in the map
 * (`npx source-map-cli` or any source-map library's `originalPositionFor`).
 * Writes `bench/tmp/maps/<FunctionId>/index.mjs` and `index.mjs.map`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildBundle, PROJECT_ROOT } from '../bench/lib/bundle';
import { FUNCTIONS } from '../bench/figures/bundles';

const id = process.argv[2] ?? '';
const fn =
  FUNCTIONS.find((candidate) => candidate.name === id) ??
  (/^functions\/[\w-]+\.ts$/.test(id) && existsSync(path.join(PROJECT_ROOT, id))
    ? { name: path.basename(id, '.ts'), entry: id }
    : undefined);
if (!fn) {
  console.error(
    `Usage: npm run bundle:map -- <FunctionId | functions/<file>.ts>\nFunction IDs: ${FUNCTIONS.map((candidate) => candidate.name).join(', ')}`,
  );
  process.exit(2);
}
// buildBundle writes the map beside index.mjs without referencing it: index.mjs is byte-identical to the deployed one.
const built = await buildBundle(fn.name, { entry: fn.entry }, path.join(PROJECT_ROOT, 'bench/tmp/maps'));
console.log(`${built.file} (${built.bytes} bytes, as deployed) and ${built.file}.map`);
