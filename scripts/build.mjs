// `npm run build`: compiles src/ into dist/ (tsc), then copies the plain-JavaScript worker entries
// (.mjs) that tsc leaves out, then builds the dashboard (Vite, dashboard/) into dist/dashboard. `npm start` runs dist/; tests and `npm run dev` run the sources with tsx.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
for (const entry of readdirSync('src', { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.mjs')) continue;
  const from = join(entry.parentPath, entry.name);
  cpSync(from, join('dist', relative('src', dirname(from)), entry.name));
}
const { build } = await import('vite');
await build({ root: 'dashboard', configFile: 'dashboard/vite.config.ts', logLevel: 'warn' });
// Tests rebuild when a source is newer than this mark (test/helpers/build.ts).
writeFileSync(join('dist', '.built'), new Date().toISOString());
