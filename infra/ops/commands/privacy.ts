/**
 * The vendor's erasure (docs/privacy.md "The vendor's erasure", operator
 * part): one person from the command line, or a deletion list such as
 * California's DROP, one JSON request a line. Values are hashed on arrival;
 * no output, error or stored record repeats a raw identifier.
 */
import { readFileSync } from 'node:fs';
import { UsageError, defineCommand } from '../command';
import { stores } from '../target';
import { ImportFileError, type BadLine } from '../../../lib/warehouse/import';
import { hashIdentifier, IDENTIFIER_TYPES, type HashedIdentifier, type IdentifierType } from '../../../lib/warehouse/identifiers';

/** The options of privacy:erase, each an identifier type. */
const OPTION_TYPES = { email: 'email', phone: 'phone', linkedinUrl: 'linkedin_url', contactId: 'contact_id' } as const satisfies Record<
  string,
  IdentifierType
>;

/** The person's identifiers, hashed; the problems name the field, never the value. */
function hashRequest(values: Partial<Record<IdentifierType, unknown>>): { identifiers: HashedIdentifier[]; problems: string[] } {
  const identifiers: HashedIdentifier[] = [];
  const problems: string[] = [];
  for (const type of IDENTIFIER_TYPES) {
    const value = values[type];
    if (value === undefined) continue;
    const hashed = typeof value === 'string' ? hashIdentifier({ type, value }) : null;
    if (hashed) identifiers.push(hashed);
    else problems.push(`${type}: cannot be normalized${type === 'phone' ? ' (E.164: "+" then 7 to 15 digits)' : ''}`);
  }
  if (identifiers.length === 0 && problems.length === 0) problems.push(`no identifier: give one of ${IDENTIFIER_TYPES.join(', ')}`);
  return { identifiers, problems };
}

/** `privacy:erase`: one person, everywhere. */
export const privacyErase = defineCommand<{ email?: string; phone?: string; linkedinUrl?: string; contactId?: string; reason: string }>({
  name: 'privacy:erase',
  summary:
    "erase a person everywhere: global suppression, warehouse, every organization's stored results and exports; tells each organization that held a copy (privacy.contact_erased)",
  details:
    'Prints {"identifiers":[{type,hash}],"warehouseContactsRemoved","contactsRemoved","organizations","notified"}. Idempotent: a rerun removes nothing more and sends no second event. The reason is printed back, never stored.',
  examples: [
    'npx ops privacy:erase --email ann@example.com --reason "GDPR Art. 17 request #42"',
    'npx ops privacy:erase --phone +4917012345678 --contact-id con_123 --reason "DROP"',
  ],
  configure: (command) =>
    command
      .option('--email <address>', 'email address (trimmed, lower-cased)')
      .option('--phone <e164>', 'phone number, E.164')
      .option('--linkedin-url <url>', 'LinkedIn profile URL')
      .option('--contact-id <id>', 'contact ID of the warehouse')
      .requiredOption('--reason <text>', 'why (printed back; not stored)'),
  run: async ({ options }) => {
    const { identifiers, problems } = hashRequest(
      Object.fromEntries(Object.entries(OPTION_TYPES).map(([option, type]) => [type, options[option as keyof typeof OPTION_TYPES]])),
    );
    if (problems.length > 0) throw new UsageError(`privacy:erase: ${problems.join('; ')}`);
    const { vendorErasureDependencies } = await stores();
    const { eraseEverywhere } = await import('../../../lib/privacy/vendor');
    return { identifiers, reason: options.reason, ...(await eraseEverywhere(vendorErasureDependencies(), identifiers)) };
  },
});

/** `privacy:intake FILE`: a deletion list, one request a line. */
export const privacyIntake = defineCommand<Record<string, never>>({
  name: 'privacy:intake',
  summary:
    'erase every person of a deletion list (JSON lines: {"email"|"phone"|"linkedin_url"|"contact_id": …}), as privacy:erase does; idempotent per line',
  details:
    'FILE: one JSON object a line with any of email, phone, linkedin_url, contact_id (blank lines skipped). The whole file is checked first: bad lines are named (line and field, never the value) and nothing is erased (exit 3). Prints {"requests","erased","notified"}: lines read, lines whose person was removed from somewhere by this run, privacy.contact_erased events sent by this run. Run it again on the same file: erased 0, notified 0.',
  examples: ['npx ops privacy:intake drop-2026-11.jsonl'],
  configure: (command) => command.argument('<file>', 'the deletion list (JSON lines)'),
  run: async ({ args }) => {
    const file = args[0]!;
    const lines = readFileSync(file, 'utf8').split(/\r?\n/);
    const requests: HashedIdentifier[][] = [];
    const bad: BadLine[] = [];
    lines.forEach((text, index) => {
      if (text.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        bad.push({ line: index + 1, problem: 'not JSON' });
        return;
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        bad.push({ line: index + 1, problem: 'not a JSON object' });
        return;
      }
      const unknown = Object.keys(parsed).filter((key) => !(IDENTIFIER_TYPES as readonly string[]).includes(key));
      const { identifiers, problems } = hashRequest(parsed as Partial<Record<IdentifierType, unknown>>);
      const all = [...unknown.map((key) => `${key}: unknown field (expected ${IDENTIFIER_TYPES.join(', ')})`), ...problems];
      if (all.length > 0) bad.push({ line: index + 1, problem: all.join('; ') });
      else requests.push(identifiers);
    });
    if (bad.length > 0) throw new ImportFileError(file, bad.slice(0, 20), Math.max(0, bad.length - 20));
    const { vendorErasureDependencies } = await stores();
    const { eraseEverywhere } = await import('../../../lib/privacy/vendor');
    const deps = vendorErasureDependencies();
    let erased = 0;
    let notified = 0;
    for (const identifiers of requests) {
      const report = await eraseEverywhere(deps, identifiers);
      if (report.warehouseContactsRemoved + report.contactsRemoved > 0) erased++;
      notified += report.notified;
    }
    return { requests: requests.length, erased, notified };
  },
});
