// Prepares a checkout of the peer product fazer-ai/baileys-api for `npm run bench -- peers`, outside
// this repository (its source never enters it), as issue 38 describes:
//
//   npx tsx scripts/prepare-peer.ts <dir> --from <checkout dir | bare git dir>
//
// --from is either a directory holding the peer's files (a clone or an unpacked archive: copied, less
// .git and node_modules; or <dir> itself, prepared in place), or a bare git directory such as the
// mirror the search tool's `fetch github:fazer-ai/baileys-api` leaves (its HEAD is unpacked with git
// archive). Then: Bun from the npm package `bun` into <dir>/.bench-runtime, bun.lock dropped (the
// registry here lacks some of the versions it pins; kept as .bench-runtime/bun.lock.dropped to compare),
// devDependencies removed, `bun install --production` against the npm registry, and a report of what
// changed. Nothing is downloaded but from the npm registry.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUN_VERSION = process.env.PEER_BUN_VERSION ?? '1.4.5';
const RUNTIME_DIR = '.bench-runtime';
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const fail = (message: string): never => {
  console.error(`prepare-peer: ${message}`);
  process.exit(1);
};

const args = process.argv.slice(2);
const fromIndex = args.indexOf('--from');
const from = fromIndex >= 0 ? args[fromIndex + 1] : undefined;
const positional = args.filter((_, i) => i !== fromIndex && i !== fromIndex + 1);
if (positional.length !== 1 || !from) {
  fail(
    'usage: npx tsx scripts/prepare-peer.ts <dir> --from <checkout dir | bare git dir>\n' +
      '  <dir>   where the prepared peer goes, outside this repository\n' +
      '  --from  a directory with the peer’s files (a clone, an unpacked archive, or <dir> itself),\n' +
      '          or a bare git directory (e.g. /work/.mirror/fazer-ai+baileys-api/repo), whose HEAD is unpacked',
  );
}
const dest = resolve(positional[0]);
const source = resolve(from as string);
const inside = (dir: string, root: string) => {
  const rel = relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'));
};
if (inside(dest, repoRoot))
  fail(`${dest} is inside this repository: the peer's source never enters it; choose a directory outside ${repoRoot}`);
if (!existsSync(source)) fail(`--from ${source} does not exist`);

const run = (file: string, argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  execFileSync(file, argv, { cwd: options.cwd, env: options.env ?? process.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// 1. The files.
const isBareGit = existsSync(join(source, 'HEAD')) && existsSync(join(source, 'objects')) && !existsSync(join(source, 'package.json'));
let origin: string;
if (source === dest) {
  if (!existsSync(join(dest, 'package.json'))) fail(`${dest} has no package.json`);
  origin = `prepared in place`;
} else {
  if (existsSync(dest) && readdirSync(dest).length > 0)
    fail(`${dest} exists and is not empty: give a new directory (or --from ${dest} to prepare it in place)`);
  mkdirSync(dest, { recursive: true });
  if (isBareGit) {
    const commit = run('git', ['--git-dir', source, 'rev-parse', 'HEAD']).trim();
    execFileSync('sh', ['-c', 'git --git-dir "$1" archive --format=tar HEAD | tar -x -C "$2"', 'sh', source, dest], { stdio: 'inherit' });
    origin = `git archive of ${source} at ${commit}`;
  } else {
    if (!existsSync(join(source, 'package.json'))) fail(`${source} is neither a checkout (no package.json) nor a bare git directory`);
    cpSync(source, dest, {
      recursive: true,
      filter: (path) => !['.git', 'node_modules', RUNTIME_DIR].includes(relative(source, path).split('/')[0] ?? ''),
    });
    let commit = '';
    try {
      commit = ` at ${run('git', ['-C', source, 'rev-parse', 'HEAD']).trim()}`;
    } catch {
      // not a git work tree: an unpacked archive
    }
    origin = `copy of ${source}${commit}`;
  }
}

interface PackageJson {
  name?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const packagePath = join(dest, 'package.json');
const pkg = JSON.parse(readFileSync(packagePath, 'utf8')) as PackageJson;
if (pkg.name !== '@fazer-ai/baileys-api')
  console.warn(`prepare-peer: package.json names ${pkg.name ?? 'nothing'}, not @fazer-ai/baileys-api; going on`);

// 2. Bun, from the npm registry.
const runtime = join(dest, RUNTIME_DIR);
mkdirSync(runtime, { recursive: true });
const registry = run('npm', ['config', 'get', 'registry']).trim();
run('npm', ['install', '--prefix', runtime, '--no-audit', '--no-fund', '--no-save', `bun@${BUN_VERSION}`]);
const bun = join(runtime, 'node_modules', '.bin', 'bun');
const bunVersion = run(bun, ['--version']).trim();

// bun.lock is JSON with trailing commas: "packages" maps each install path to ["name@version", ...].
const lockedVersions = (file: string): Map<string, string> => {
  const versions = new Map<string, string>();
  if (!existsSync(file)) return versions;
  const lock = JSON.parse(readFileSync(file, 'utf8').replace(/,(\s*[}\]])/g, '$1')) as { packages?: Record<string, unknown[]> };
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const spec = String(entry[0] ?? '');
    versions.set(path, spec.slice(spec.lastIndexOf('@') + 1));
  }
  return versions;
};

// 3. The lock file and the devDependencies go; the production dependencies are installed.
const lockPath = join(dest, 'bun.lock');
const droppedLock = join(runtime, 'bun.lock.dropped');
// A checkout prepared before (copied from, or prepared again in place) compares against the lock it had.
const earlierLock = join(source, RUNTIME_DIR, 'bun.lock.dropped');
if (!existsSync(lockPath) && existsSync(earlierLock) && earlierLock !== droppedLock) cpSync(earlierLock, lockPath);
const hadLock = existsSync(lockPath) || existsSync(droppedLock);
if (existsSync(lockPath)) renameSync(lockPath, droppedLock);
const before = lockedVersions(hadLock ? droppedLock : '');
const devDependencies = pkg.devDependencies ?? {};
delete pkg.devDependencies;
writeFileSync(packagePath, `${JSON.stringify(pkg, null, 2)}\n`);
rmSync(join(dest, 'node_modules'), { recursive: true, force: true });
const installStarted = Date.now();
try {
  const out = execFileSync(bun, ['install', '--production', '--no-progress'], {
    cwd: dest,
    env: { ...process.env, NPM_CONFIG_REGISTRY: registry, BUN_CONFIG_REGISTRY: registry },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.stdout.write(
    out
      .split('\n')
      .filter((line) => /error|warn/i.test(line))
      .join('\n'),
  );
} catch (err) {
  const { stdout, stderr } = err as { stdout?: string; stderr?: string };
  fail(`bun install --production failed:\n${stdout ?? ''}${stderr ?? ''}`);
}
// `bun install --production` writes no lock file: the tree is read from node_modules, in the lock's
// terms (a nested package is keyed by its parent's key, a slash, and its name).
const installedTree = (dir: string, parent = '', into = new Map<string, string>()): Map<string, string> => {
  if (!existsSync(dir)) return into;
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(dir, entry)).map((name) => `${entry}/${name}`) : [entry];
    for (const name of names) {
      const manifest = join(dir, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const key = parent ? `${parent}/${name}` : name;
      into.set(key, (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version);
      installedTree(join(dir, name, 'node_modules'), key, into);
    }
  }
  return into;
};
const after = installedTree(join(dest, 'node_modules'));

// 4. What changed.
const installed = (name: string): string => {
  try {
    return (JSON.parse(readFileSync(join(dest, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
};
console.log(
  `peer prepared in ${dest} (${origin}) with Bun ${bunVersion} from the npm package bun@${BUN_VERSION} (${registry}), in ${((Date.now() - installStarted) / 1000).toFixed(0)} s`,
);
console.log(
  hadLock
    ? `  bun.lock dropped (${before.size} packages pinned; kept as ${relative(dest, droppedLock)}); bun install --production installed ${after.size} packages and wrote no lock`
    : '  no bun.lock was there',
);
const devNames = Object.keys(devDependencies);
if (devNames.length === 0 && hadLock) console.log('  (this checkout was prepared before: its devDependencies were already gone)');
console.log(
  `  devDependencies removed (${devNames.length}): ${devNames.map((name) => `${name}@${devDependencies[name]}`).join(', ') || 'none'}`,
);
console.log('  dependencies: range in package.json, version the dropped lock pinned, version installed');
for (const [name, range] of Object.entries(pkg.dependencies ?? {})) {
  const pinned = before.get(name) ?? '-';
  const now = installed(name);
  console.log(`    ${name} ${range}: ${pinned} -> ${now}${pinned !== '-' && pinned !== now ? '  (changed)' : ''}`);
}
const changed = [...after].filter(([path, version]) => before.has(path) && before.get(path) !== version);
const added = [...after.keys()].filter((path) => !before.has(path));
const droppedOut = [...before.keys()].filter((path) => !after.has(path));
console.log(
  `  whole tree against the dropped lock: ${changed.length} resolved to another version, ${added.length} new, ${droppedOut.length} no longer installed (dev-only among them)`,
);
for (const [path, version] of changed) console.log(`    ${path}: ${before.get(path)} -> ${version}`);
const patches = join(dest, 'patches');
if (existsSync(patches) && statSync(patches).isDirectory()) {
  console.log(`  patches applied by bun from package.json's patchedDependencies: ${readdirSync(patches).join(', ')}`);
}
writeFileSync(
  join(runtime, 'prepared.json'),
  `${JSON.stringify({ origin, bun: bunVersion, preparedAt: new Date().toISOString(), baileys: installed('@whiskeysockets/baileys') }, null, 2)}\n`,
);
console.log(`run it with: PEER_DIR=${dest} npm run bench -- peers`);
