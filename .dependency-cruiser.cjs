/**
 * The house, floor by floor (docs/architecture.md): imports run downward only.
 *
 * FLOORS lists every floor from the top (entry) to the bottom (ground); each
 * domain is a floor of its own, in the one order below. A module may import
 * its own floor and any floor below it, never one above it. On top of that:
 * no circular import anywhere, `functions/` reaches `lib/` only through the
 * composition root (`lib/root.ts`) and the domains' request schemas, and the
 * pipeline and the ground import no domain (they sit below every domain, so
 * the floor rule says it; a rule of its own names it in the message).
 *
 * There is no exceptions list: code that needs an upward import moves.
 * Adding a domain: add its folder to FLOORS at the height of what it
 * imports (above everything it uses, below everything that uses it).
 */

/** Every floor, top to bottom: a name and the path patterns it owns. */
const FLOORS = [
  { name: 'entry', paths: ['^functions/', '^mcp/', '^infra/', '^bin/'] },
  { name: 'composition', paths: ['^lib/root\\.ts$', '^lib/contract/'] },
  // Domains, top to bottom. Each may import only the domains after it.
  { name: 'domain:migrations', paths: ['^lib/migrations/'] },
  { name: 'domain:exports', paths: ['^lib/exports/'] },
  { name: 'domain:enrichment', paths: ['^lib/enrichment/'] },
  // What may be delivered (suppressions) and erasure: below every delivery path and the workflow, above the stores it rewrites.
  { name: 'domain:privacy', paths: ['^lib/privacy/'] },
  { name: 'domain:webhooks', paths: ['^lib/webhooks/'] },
  { name: 'domain:campaigns', paths: ['^lib/campaigns/'] },
  { name: 'domain:uploads', paths: ['^lib/uploads/'] },
  { name: 'domain:organizations', paths: ['^lib/organizations/'] },
  { name: 'domain:history', paths: ['^lib/history/'] },
  { name: 'domain:account-lists', paths: ['^lib/account-lists/'] },
  { name: 'domain:results', paths: ['^lib/results/'] },
  { name: 'domain:credits', paths: ['^lib/credits/'] },
  { name: 'domain:test-mode', paths: ['^lib/test-mode/'] },
  { name: 'domain:warehouse', paths: ['^lib/warehouse/'] },
  // The audit log (docs/audit.md): what the pipeline records of every write, read by org/audit. Below every domain; the pipeline reaches it only through the port root wires (lib/http/request-record.ts).
  { name: 'domain:audit', paths: ['^lib/audit/'] },
  // The request pipeline.
  { name: 'pipeline', paths: ['^lib/http/', '^lib/idempotency/'] },
  // Ground: settings, identifiers, errors, storage primitives, AWS clients, observability.
  {
    name: 'ground',
    paths: [
      '^lib/config\\.ts$',
      '^lib/config-docs\\.ts$',
      '^lib/ids\\.ts$',
      '^lib/errors\\.ts$',
      '^lib/schemas\\.ts$',
      '^lib/objects\\.ts$',
      '^lib/aws\\.ts$',
      '^lib/observability\\.ts$',
      '^lib/db/',
      '^lib/storage/',
      '^lib/lambda/',
    ],
  },
];

const pattern = (paths) => paths.join('|');

/** One rule per floor: nothing on it imports a floor above it. */
const upward = FLOORS.slice(1).map((floor, index) => ({
  name: `no-upward-from-${floor.name.replace(':', '-')}`,
  comment: `${floor.name} may import only its own floor and the floors below it (${
    FLOORS.slice(index + 2)
      .map((f) => f.name)
      .join(', ') || 'nothing'
  }).`,
  severity: 'error',
  from: { path: pattern(floor.paths) },
  to: { path: pattern(FLOORS.slice(0, index + 1).flatMap((f) => f.paths)) },
}));

const domainPaths = FLOORS.filter((f) => f.name.startsWith('domain:')).flatMap((f) => f.paths);
const ownedPaths = FLOORS.flatMap((f) => f.paths);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Two modules that import each other are one concept split in two: merge them, or move the shared part down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'functions-through-root',
      comment:
        'A handler reaches lib/ only through the composition root (lib/root.ts) and the request schemas (lib/*/schema.ts, lib/schemas.ts).',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^lib/', pathNot: '^lib/root\\.ts$|^lib/[^/]+/schema\\.ts$|^lib/schemas\\.ts$' },
    },
    {
      name: 'mcp-through-root-and-handlers',
      comment:
        'The MCP server (mcp/) reaches lib/ only through the composition root and the request schemas, and runs each operation through its own handler (functions/, found by infra/routes.ts; events built by infra/local/event.ts): no second implementation of an operation.',
      severity: 'error',
      from: { path: '^mcp/' },
      to: {
        path: '^(lib|infra)/',
        pathNot: '^lib/root\\.ts$|^lib/[^/]+/schema\\.ts$|^lib/schemas\\.ts$|^infra/routes\\.ts$|^infra/local/event\\.ts$',
      },
    },
    {
      name: 'pipeline-and-ground-import-no-domain',
      comment: 'The request pipeline and the ground serve every domain, so they import none.',
      severity: 'error',
      from: { path: pattern([...FLOORS.find((f) => f.name === 'pipeline').paths, ...FLOORS.find((f) => f.name === 'ground').paths]) },
      to: { path: pattern(domainPaths) },
    },
    {
      name: 'every-lib-module-on-a-floor',
      comment: 'A new folder or file under lib/ gets its floor in .dependency-cruiser.cjs before anything imports it.',
      severity: 'error',
      from: { path: '^(lib|functions|mcp|infra|bin)/' },
      to: { path: '^lib/', pathNot: pattern(ownedPaths) },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|\\.local)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.mjs', '.js', '.json'],
    },
  },
};
