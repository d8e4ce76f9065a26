/**
 * The figures of README.md and docs/ that follow from the code, written by
 * `npm run openapi:write` and checked by `npm run openapi:check` and
 * test/docs-generated.test.ts: the settings table and every default of
 * lib/config.ts's `SETTINGS`, the stage throttle and reserved concurrency of
 * infra/stack.ts's `STAGES`, and the arithmetic between them.
 *
 * A Markdown file marks what is generated in one of two ways (HTML comments,
 * invisible once rendered):
 * - a block: `<!-- generated:NAME -->` … `<!-- /generated:NAME -->` on lines
 *   of their own; everything between is written by the block's generator;
 * - a figure inside a sentence: `<!-- figure:NAME -->text<!-- /figure -->`.
 * A TypeScript file marks a block with line comments instead:
 * `// generated:NAME (npm run openapi:write)` … `// /generated:NAME`.
 *
 * To show a new figure: add a generator to FIGURES or BLOCKS, mark the place,
 * run `npm run openapi:write` (docs/architecture.md "Change a default").
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS, type SettingDeclaration, type SettingName } from '../lib/config';
import { SETTING_DOCS, type SettingDocs } from '../lib/config-docs';
import { STAGES, type DeploymentStage } from '../infra/stack';
import { WORKFLOW_TASKS } from '../infra/workflow';
import { API_ROUTES } from '../infra/routes';
import { ERROR_STATUS } from '../lib/errors';
import { SCOPES } from '../lib/http/scopes';
import { LEASE_SHARE } from '../lib/http/rate-limit';
import { buildOpenApiDocument } from '../lib/contract/openapi';
import { ERRORS, STATUS_NOTES, codesByStatus, errorDetailFields } from '../lib/contract/errors';

/** Files that hold generated figures, relative to the repository root. */
export const FILES_WITH_FIGURES = [
  'README.md',
  'docs/limits.md',
  'docs/deploy.md',
  'docs/test-mode.md',
  'docs/errors.md',
  'docs/authentication.md',
  'client/index.ts',
];

/** An integer as the docs write it: `1,000`. */
export const count = (value: number) => value.toLocaleString('en-US');

/** Seconds in words when they make a round unit: `30 days`, `24 h`, `15 minutes`, `1 hour`. */
export function duration(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds >= 2 * 86_400) return `${count(seconds / 86_400)} days`;
  if (seconds % 3_600 === 0 && seconds >= 3_600) return seconds === 3_600 ? '1 hour' : `${count(seconds / 3_600)} h`;
  if (seconds % 60 === 0 && seconds >= 60) return seconds === 60 ? '1 minute' : `${count(seconds / 60)} minutes`;
  return `${count(seconds)} s`;
}

const code = (text: string) => `\`${text}\``;
// Read at each render (never captured at import), so a changed declaration shows in the next render.
let rate: number = SETTINGS.rateLimitRequests.default;
let window: number = SETTINGS.rateLimitWindowSeconds.default;
/** Requests per second of one organization at its limit. */
let orgPerSecond = rate / window;
/** An example of the RateLimit field: remaining requests and seconds to the reset, partway through a window. */
let rateLimitExample: readonly [number, number] = [0, 0];
function readSettings(): void {
  rate = SETTINGS.rateLimitRequests.default;
  window = SETTINGS.rateLimitWindowSeconds.default;
  orgPerSecond = rate / window;
  rateLimitExample = [Math.round(rate * 0.7), Math.max(1, Math.round(window * 0.4))];
}
const percent = (part: number, whole: number) => `${Number(((100 * part) / whole).toFixed(1))} %`;

/** A setting's default as the settings table shows it. */
function defaultText(setting: SettingDeclaration & SettingDocs): string {
  if (setting.default === undefined) return setting.setBy === 'stack' ? 'set by the stack' : 'none';
  if (typeof setting.default === 'boolean') return code(String(setting.default));
  const text = count(setting.default);
  return setting.unit === 'seconds' && setting.default >= 60 ? `${text} (${duration(setting.default)})` : text;
}

/** A setting's bounds as the settings table shows them. */
function boundsText(setting: SettingDeclaration): string {
  if (setting.kind === 'flag') return '`true`/`1` or not';
  if (setting.kind === 'text') return 'text';
  if (setting.kind === 'number') return 'a positive number';
  const min = setting.min ?? 0;
  if (setting.max === undefined) return `${count(min)} or more`;
  return `${count(min)} to ${count(setting.max)}${setting.clampToMax ? ' (more is lowered to it)' : ''}`;
}

function settingsTable(): string {
  const rows = (Object.keys(SETTINGS) as SettingName[]).map((name) => {
    const setting: SettingDeclaration & SettingDocs = { ...SETTINGS[name], ...SETTING_DOCS[name] };
    const meaning = setting.docs
      ? `${setting.meaning} ([${setting.docs.replace(/^docs\//, '').replace(/\.md.*$/, '')}](${setting.docs}))`
      : setting.meaning;
    return `| ${code(setting.env)} | ${defaultText(setting)} | ${boundsText(setting)} | ${setting.unit ?? ''} | ${meaning} |`;
  });
  return ['| variable | default | accepted | unit | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

const stageNames = Object.keys(STAGES) as DeploymentStage[];
const throttleOf = (stage: DeploymentStage) => STAGES[stage].throttle;
/** Workflow task functions other than FindContacts, each with `reservedConcurrency.workflowTask`. */
const otherTasks = Object.keys(WORKFLOW_TASKS).length - 1;
const reservedTotal = (stage: DeploymentStage) => {
  const r = STAGES[stage].reservedConcurrency;
  return r.findContacts + otherTasks * r.workflowTask + r.webhookDeliver + r.webhookDispatch;
};

function throttleBlock(): string {
  const prod = throttleOf('prod');
  const dev = throttleOf('dev');
  const flood = orgPerSecond * 10;
  return [
    '| stage | rate (requests/s, steady) | burst (token bucket) |',
    '|---|---|---|',
    ...stageNames.map((stage) => `| ${stage} | ${count(throttleOf(stage).rateLimit)} | ${count(throttleOf(stage).burstLimit)} |`),
    '',
    'That throttle is shared by every organization; the limits per organization',
    `are the API's own ([limits](limits.md)): \`RATE_LIMIT_REQUESTS\` = ${count(rate)} per`,
    `\`RATE_LIMIT_WINDOW_SECONDS\` = ${count(window)}, i.e. **${count(orgPerSecond)} requests/s** for one`,
    `organization at its limit, at most ${count(rate)} at once. The arithmetic:`,
    '',
    `- One organization at its limit uses ${count(orgPerSecond)}/s, **${percent(orgPerSecond, prod.rateLimit)}** of a prod route's ${count(prod.rateLimit)}/s`,
    `  (${percent(orgPerSecond, dev.rateLimit)} of dev's ${count(dev.rateLimit)}/s); its largest burst, a whole window's ${count(rate)} at once,`,
    `  fits the burst bucket ${count(Math.floor(prod.burstLimit / rate))} times (dev: ${count(Math.floor(dev.burstLimit / rate))}).`,
    `- One organization flooding at 10× its limit (${count(flood)}/s) ${flood <= prod.rateLimit ? 'still fits under' : 'goes over'} the`,
    `  prod throttle: the API answers ${count(flood - orgPerSecond)}/s of it with its own 429 \`rate_limited\`,`,
    "  each costing one authentication and, for a container's first refusal of a",
    "  window, one counter write (the container then refuses that window's rest",
    "  without a write), so the other organizations' requests keep going.",
    `  It takes **${count(Math.floor(prod.rateLimit / flood))}** such floods on one prod route (${count(prod.rateLimit)} / ${count(flood)}) before API`,
    "  Gateway's own 429 (its body, not our envelope) touches anyone else.",
    `- Lambda: a refusal takes ~5 ms of one function's time (one authentication);`,
    `  ${count(flood)} refusals/s hold about ${count(Math.max(1, Math.ceil((flood * 5) / 1000)))} concurrent execution${Math.ceil((flood * 5) / 1000) > 1 ? 's' : ''}. The account's 1,000`,
    `  concurrent executions minus the reserved ${count(reservedTotal('prod'))} below leave ${count(1000 - reservedTotal('prod'))} for the API.`,
  ].join('\n');
}

function reservedBlock(): string {
  const cell = (pick: (stage: DeploymentStage) => number) => stageNames.map((stage) => count(pick(stage))).join(' | ');
  return [
    `| function | ${stageNames.join(' | ')} |`,
    `|---|${stageNames.map(() => '---').join('|')}|`,
    `| \`WorkflowFindContacts\` (the Map's batches: 8 per execution, \`MAP_CONCURRENCY\`) | ${cell((s) => STAGES[s].reservedConcurrency.findContacts)} |`,
    `| each other workflow task (${otherTasks} of them: ${Object.keys(WORKFLOW_TASKS)
      .filter((key) => key !== 'findContacts')
      .join(', ')}) | ${cell((s) => STAGES[s].reservedConcurrency.workflowTask)} |`,
    `| \`WebhooksDeliver\` | ${cell((s) => STAGES[s].reservedConcurrency.webhookDeliver)} |`,
    `| \`WebhooksDispatch\` | ${cell((s) => STAGES[s].reservedConcurrency.webhookDispatch)} |`,
    `| total | ${cell(reservedTotal)} |`,
  ].join('\n');
}

function rateLimitHeadersBlock(): string {
  const [remaining, reset] = rateLimitExample;
  return ['```http', `RateLimit-Policy: "requests";q=${rate};w=${window}`, `RateLimit: "requests";r=${remaining};t=${reset}`, '```'].join(
    '\n',
  );
}

/** The client's operation table (client/index.ts `OPERATIONS`), one line per route of infra/routes.ts. */
function clientOperationsBlock(): string {
  return API_ROUTES.map(
    ({ operation }) => `  ${operation.operationId}: { path: '${operation.path}', idempotent: ${operation.idempotent === true} },`,
  ).join('\n');
}

/**
 * docs/errors.md's table of every code: its status and `details` fields (the
 * OpenAPI builder's), and the operations whose document lists it ("any
 * operation" when all do), so the page cannot miss a code an operation
 * answers.
 */
function errorCodesBlock(): string {
  const document = buildOpenApiDocument(API_ROUTES.map((route) => route.operation)) as {
    paths: Record<
      string,
      { post: { responses: Record<string, { content?: { 'application/json'?: { examples?: Record<string, unknown> } } }> } }
    >;
  };
  const raisedBy = (code: string) => {
    const paths = Object.entries(document.paths)
      .filter(([, item]) =>
        Object.values(item.post.responses).some((response) => code in (response.content?.['application/json']?.examples ?? {})),
      )
      .map(([operationPath]) => operationPath.replace(/^\/v1\/(campaigns\/)?/, ''));
    if (paths.length === API_ROUTES.length) return 'any operation';
    return paths.length === 0 ? 'no operation lists it' : paths.join(', ');
  };
  return [
    '| code | status | `details` | listed by |',
    '|---|---|---|---|',
    ...codesByStatus().map((code) => {
      const fields = errorDetailFields(code);
      return `| [\`${code}\`](#${code}) | ${ERROR_STATUS[code]} | ${fields.length ? fields.map((field) => field.replace(/^(\w+)/, '`$1`')).join(', ') : 'none'} | ${raisedBy(code)} |`;
    }),
  ].join('\n');
}

/** docs/authentication.md's table of scopes: each scope and the operations that need it (their `scope`, infra/routes.ts). */
function scopesBlock(): string {
  return [
    '| scope | operations |',
    '|---|---|',
    ...SCOPES.map((scope) => {
      const paths = API_ROUTES.filter((route) => route.operation.scope === scope).map((route) =>
        code(route.operation.path.replace(/^\/v1\//, '')),
      );
      return `| ${code(scope)} | ${paths.length ? paths.join(', ') : 'none'} |`;
    }),
  ].join('\n');
}

/** The failure envelope at the top of docs/errors.md: the declared example of `insufficient_credits` (lib/contract/errors.ts). */
function errorEnvelopeBlock(): string {
  return ['```json', JSON.stringify({ data: null, error: ERRORS.insufficient_credits.example.toJSON() }, null, 2), '```'].join('\n');
}

/**
 * docs/errors.md's section of every code, under its status: when the API answers it, a real example (its class's
 * answer), and what to do, all from the code's declaration (lib/contract/errors.ts).
 */
function errorSectionsBlock(): string {
  const sections: string[] = [];
  let status: number | undefined;
  for (const code of codesByStatus()) {
    const declared = ERRORS[code];
    if (ERROR_STATUS[code] !== status) {
      status = ERROR_STATUS[code];
      sections.push(`## ${status}`);
      const note = STATUS_NOTES[status];
      if (note) sections.push(note);
    }
    sections.push(
      `### \`${code}\``,
      declared.when,
      `Example: \`${JSON.stringify(declared.example.toJSON())}\``,
      `What to do: ${declared.whatToDo}`,
    );
  }
  return sections.join('\n\n');
}

/**
 * The per-source limits of the web ACL in front of each stage (infra/edge.ts) against the stage's throttle and one
 * organization's limit (docs/deploy.md, "Edge protection").
 */
function edgeBlock(): string {
  const rows = stageNames.map((stage) => {
    const edge = STAGES[stage].edge;
    return `| ${stage} | ${count(edge.anonymousPerAddress)} per ${count(edge.windowSeconds)} s | ${count(edge.perAddress)} per ${count(edge.windowSeconds)} s |`;
  });
  const prod = STAGES.prod;
  const anonymousPerSecond = prod.edge.anonymousPerAddress / prod.edge.windowSeconds;
  const perAddressPerSecond = prod.edge.perAddress / prod.edge.windowSeconds;
  return [
    '| stage | requests without an API key, per address | all requests, per address |',
    '|---|---|---|',
    ...rows,
    '',
    'The arithmetic (prod):',
    '',
    `- One address without a key sends at most ${count(anonymousPerSecond)}/s averaged over the window,`,
    `  **${percent(anonymousPerSecond, prod.throttle.rateLimit)}** of the stage's ${count(prod.throttle.rateLimit)}/s: it takes **${count(Math.ceil(prod.throttle.rateLimit / anonymousPerSecond))}** such addresses`,
    "  at once to reach the stage's throttle: traffic without a well-formed key from one client",
    '  can no longer spend it for everyone (a well-formed but unknown or revoked key counts',
    '  under the per-address limit below).',
    `- One address with keys sends at most ${count(perAddressPerSecond)}/s: ${count(perAddressPerSecond / orgPerSecond)} organizations at their own`,
    `  limit (${count(orgPerSecond)}/s each) behind one address (an integration platform, a NAT) are never`,
    `  blocked; a single address reaches **${percent(perAddressPerSecond, prod.throttle.rateLimit)}** of the stage's throttle at most.`,
    `- Over either limit the edge answers \`429\` with the API's own \`rate_limited\` envelope and`,
    `  \`Retry-After: ${count(prod.edge.windowSeconds)}\` (the window), without reaching API Gateway or any function.`,
  ].join('\n');
}

/** Generators of whole blocks, by name. */
export const BLOCKS: Record<string, () => string> = {
  'client-operations': clientOperationsBlock,
  'error-codes': errorCodesBlock,
  'error-envelope': errorEnvelopeBlock,
  'error-sections': errorSectionsBlock,
  scopes: scopesBlock,
  settings: settingsTable,
  'stage-throttle': throttleBlock,
  'edge-protection': edgeBlock,
  'reserved-concurrency': reservedBlock,
  'rate-limit-headers': rateLimitHeadersBlock,
};

const stageThrottleShort = () =>
  stageNames
    .map((stage) => `${stage} ${count(throttleOf(stage).rateLimit)} req/s, burst ${count(throttleOf(stage).burstLimit)}`)
    .join('; ');

/** Generators of figures inside a sentence, by name. */
export const FIGURES: Record<string, () => string> = {
  'rate-limit': () => `${count(rate)} per ${count(window)} s`,
  'rate-limit-bold': () => `**${count(rate)} authenticated requests per ${count(window)} seconds**`,
  'rate-limit-policy': () => code(`RateLimit-Policy: "requests";q=${rate};w=${window}`),
  'exports-per-hour': () => count(SETTINGS.exportsPerHour.default),
  'uploads-per-hour': () => count(SETTINGS.uploadsPerHour.default),
  'limit-defaults': () =>
    [SETTINGS.rateLimitRequests, SETTINGS.rateLimitWindowSeconds, SETTINGS.exportsPerHour, SETTINGS.uploadsPerHour]
      .map((setting) => `${code(setting.env)} (${count(setting.default)})`)
      .join(', ')
      .replace(/, ([^,]*)$/, ' and $1'),
  // A lease's largest share of the default request limit (lib/http/rate-limit.ts), as docs/limits.md's example states it.
  'lease-example': () => `${count(LEASE_SHARE * 100)} % of the limit (${count(Math.floor(rate * LEASE_SHARE))} requests of ${count(rate)})`,
  'test-rate-limit': () => `${count(SETTINGS.testRateLimitRequests.default)} per ${count(window)} s`,
  'test-account-ids-per-day': () => count(SETTINGS.testAccountIdsPerDay.default),
  'test-limit-defaults': () =>
    [SETTINGS.testRateLimitRequests, SETTINGS.testAccountIdsPerDay]
      .map((setting) => `${code(setting.env)} (${count(setting.default)})`)
      .join(' and '),
  'stage-throttle': stageThrottleShort,
  'rate-limit-example': () => {
    const [remaining, reset] = rateLimitExample;
    return `${code(`RateLimit: "requests";r=${remaining};t=${reset}`)} (${count(remaining)} requests left, the window resets in ${count(reset)} s)`;
  },
  'exports-over-limit': () => {
    // Exports and uploads share the figure only while their hourly limits agree.
    const n = SETTINGS.exportsPerHour.default + 1;
    const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
    return SETTINGS.exportsPerHour.default === SETTINGS.uploadsPerHour.default
      ? `${count(n)}${suffix}`
      : `${count(n)}${suffix} export or ${count(SETTINGS.uploadsPerHour.default + 1)}th`;
  },
};

/** `text` with every marked block and figure written from the code. @throws Error on an unknown name or an unclosed block. */
export function renderFigures(text: string, file: string): string {
  readSettings();
  const withBlocks = text.replace(
    /<!-- generated:([\w-]+) -->\n([\s\S]*?)<!-- \/generated:([\w-]+) -->/g,
    (whole, name: string, _body, closing: string) => {
      if (name !== closing) throw new Error(`${file}: block ${name} closed as ${closing}`);
      const generate = BLOCKS[name];
      if (!generate) throw new Error(`${file}: no generator for block ${name}`);
      return `<!-- generated:${name} -->\n${generate()}\n<!-- /generated:${name} -->`;
    },
  );
  const withCodeBlocks = withBlocks.replace(
    /^(\s*)\/\/ generated:([\w-]+) (.*)\n[\s\S]*?^\s*\/\/ \/generated:([\w-]+)$/gm,
    (whole, indent: string, name: string, note: string, closing: string) => {
      if (name !== closing) throw new Error(`${file}: block ${name} closed as ${closing}`);
      const generate = BLOCKS[name];
      if (!generate) throw new Error(`${file}: no generator for block ${name}`);
      return `${indent}// generated:${name} ${note}\n${generate()}\n${indent}// /generated:${name}`;
    },
  );
  return withCodeBlocks.replace(/<!-- figure:([\w-]+) -->([\s\S]*?)<!-- \/figure -->/g, (whole, name: string) => {
    const generate = FIGURES[name];
    if (!generate) throw new Error(`${file}: no generator for figure ${name}`);
    return `<!-- figure:${name} -->${generate()}<!-- /figure -->`;
  });
}

/** Every file with figures and its content as the code generates it. */
export function generateFigureFiles(root: string): [file: string, content: string][] {
  return FILES_WITH_FIGURES.map((file) => {
    const absolute = path.join(root, file);
    return [absolute, renderFigures(readFileSync(absolute, 'utf8'), file)];
  });
}
