/**
 * `npm run asyncapi:validate` (CI): validates docs/asyncapi.json, the
 * AsyncAPI 3 document of the webhook events, with @asyncapi/parser (the
 * AsyncAPI Initiative's parser, with its Spectral-based rules). Fails on any
 * error or warning. Runs offline: the document has no external reference.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { validateAsyncApi } from '../test/support/asyncapi';

const file = path.resolve(import.meta.dirname, '..', process.argv[2] ?? 'docs/asyncapi.json');
const diagnostics = await validateAsyncApi(await readFile(file, 'utf8'));
for (const diagnostic of diagnostics) console.error(`${diagnostic.severity} ${diagnostic.code} ${diagnostic.path}: ${diagnostic.message}`);
if (diagnostics.length > 0) process.exit(1);
console.log(`${path.relative(process.cwd(), file)}: valid AsyncAPI 3, no warning.`);
