/**
 * Validation of an AsyncAPI document with @asyncapi/parser: its schema and
 * its rules (the parser's Spectral ruleset). Shared by
 * `npm run asyncapi:validate` and test/asyncapi-arazzo.test.ts.
 */
import { Parser } from '@asyncapi/parser';

/** A problem the parser reports: severity `error`, `warning`, `info` or `hint`. */
export interface AsyncApiDiagnostic {
  severity: string;
  code: string;
  path: string;
  message: string;
}

const SEVERITIES = ['error', 'warning', 'info', 'hint'];

/**
 * Validates an AsyncAPI document (JSON text).
 * @returns every error and warning (empty when the document is valid and clean).
 */
export async function validateAsyncApi(text: string): Promise<AsyncApiDiagnostic[]> {
  const diagnostics = await new Parser().validate(text);
  return diagnostics
    .filter((d) => d.severity <= 1)
    .map((d) => ({
      severity: SEVERITIES[d.severity] ?? String(d.severity),
      code: String(d.code),
      path: d.path.join('.'),
      message: d.message,
    }));
}
