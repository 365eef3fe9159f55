import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// vitest's global setup: tests that start the service as a process run the compiled build (dist/), as
// `npm start` does, and the browser tests load the dashboard from dist/dashboard, so it is rebuilt
// first when any source is newer than the last build.
const newestSource = (dir: string): number => {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
};

const builtAt = (): number => {
  try {
    return statSync('dist/.built').mtimeMs;
  } catch {
    return 0;
  }
};

export const setup = (): void => {
  if (builtAt() >= Math.max(newestSource('src'), newestSource('dashboard'), statSync('tsconfig.build.json').mtimeMs)) return;
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
};
