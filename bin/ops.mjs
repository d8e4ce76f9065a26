#!/usr/bin/env node
/**
 * `npx ops <command>` / `npm exec ops -- <command>`: the operator CLI
 * (infra/ops.ts, README "Operator CLI") without npm's script banner on stdout.
 *
 * Whatever `node` started this shim (the machine's may be older), the CLI
 * runs on the project's pinned Node 24 (the `node` devDependency), in one
 * child process that shares this terminal. The child's exit code (or signal)
 * becomes this process's.
 *
 * Fast start: the CLI's TypeScript is bundled once with esbuild (a
 * devDependency) into `node_modules/.cache/ops/`, not transpiled on each
 * call. The bundle is kept with the hash of every project file it was built
 * from (esbuild's metafile; packages stay external and load from
 * node_modules), in a folder named by that hash; a call re-hashes those
 * files and rebuilds only when one changed. `import.meta.dirname`/`url` of each source file keep their
 * meaning in the bundle (replaced by the file's own values at build time).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pinnedNode = path.join(root, 'node_modules', 'node', 'bin', 'node');
const node = existsSync(pinnedNode) ? pinnedNode : process.execPath;
const entry = path.join(root, 'infra', 'ops.ts');
const cacheDir = path.join(root, 'node_modules', '.cache', 'ops');
const manifest = path.join(cacheDir, 'inputs.json');

/** Hash of the given project files' contents (a missing file hashes as missing). */
function hashOf(files) {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(file);
    hash.update('\0');
    hash.update(existsSync(path.join(root, file)) ? readFileSync(path.join(root, file)) : 'missing');
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The bundle, when it exists and every file it was built from is unchanged. */
function cachedBundle() {
  try {
    const { files, hash } = JSON.parse(readFileSync(manifest, 'utf8'));
    const bundle = path.join(cacheDir, `bundle-${hash}`, 'ops.js');
    return existsSync(bundle) && hashOf(files) === hash ? bundle : undefined;
  } catch {
    return undefined;
  }
}

/** Builds the bundle and its manifest (written beside it, each atomically). */
async function build() {
  const esbuild = await import('esbuild');
  const keepMeta = {
    name: 'keep-import-meta',
    setup(builder) {
      builder.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = readFileSync(args.path, 'utf8')
          .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path))
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
        return { contents: source, loader: 'ts' };
      });
    },
  };
  mkdirSync(cacheDir, { recursive: true });
  // Split at dynamic imports: a command loads the stores (and the AWS SDK) only when it runs, not for --help.
  const temporary = path.join(cacheDir, `bundle.${process.pid}.tmp`);
  const result = await esbuild.build({
    entryPoints: { ops: entry },
    bundle: true,
    splitting: true,
    outExtension: { '.js': '.js' },
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    outdir: temporary,
    metafile: true,
    logLevel: 'error',
    plugins: [keepMeta],
  });
  const files = [
    ...Object.keys(result.metafile.inputs).map((input) => path.relative(root, path.resolve(root, input))),
    'package.json',
    'tsconfig.json',
  ].sort();
  const hash = hashOf(files);
  // The chunks are ES modules: a package.json beside them says so.
  writeFileSync(path.join(temporary, 'package.json'), '{"type":"module"}\n');
  // One folder per content hash, never replaced: a concurrent call may be running the bundle another built.
  const bundleDir = path.join(cacheDir, `bundle-${hash}`);
  if (existsSync(bundleDir)) rmSync(temporary, { recursive: true, force: true });
  else {
    try {
      renameSync(temporary, bundleDir);
    } catch (error) {
      // Another call renamed the same build first.
      if (!existsSync(bundleDir)) throw error;
      rmSync(temporary, { recursive: true, force: true });
    }
  }
  const manifestTemporary = `${manifest}.${process.pid}.tmp`;
  writeFileSync(manifestTemporary, JSON.stringify({ files, hash }));
  renameSync(manifestTemporary, manifest);
  return path.join(bundleDir, 'ops.js');
}

let script;
try {
  script = cachedBundle() ?? (await build());
} catch (error) {
  // No esbuild (a production install) or a failed build: run the sources through tsx, as before.
  process.stderr.write(
    `warning: could not bundle the operator CLI (${error instanceof Error ? error.message : String(error)}); running it through tsx\n`,
  );
}
const args = script ? [script] : ['--import', import.meta.resolve('tsx'), entry];

const child = spawn(node, [...args, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  process.stderr.write(`error: could not start ${node}: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
