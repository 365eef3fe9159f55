// Writes the per-provider Prisma schemas from prisma/schema.base.prisma, so the two can never drift.
import { readFileSync, writeFileSync } from 'node:fs';

const base = readFileSync(new URL('../prisma/schema.base.prisma', import.meta.url), 'utf8');
const header = (provider, clientDir, pothos) => `// GENERATED from prisma/schema.base.prisma by scripts/sync-schemas.mjs; do not edit.

generator client {
  provider     = "prisma-client"
  output       = "../../src/generated/${clientDir}"
  moduleFormat = "esm"
}
${pothos}
datasource db {
  provider = "${provider}"
}
`;
const pothos = `
generator pothos {
  provider     = "prisma-pothos-types"
  clientOutput = "./sqlite/client.js"
  output       = "../../src/generated/pothos-types.ts"
}
`;
const body = base.replace(/^\/\/ Source of truth[\s\S]*?\n\n/, '');
const targets = [
  ['prisma/sqlite/schema.prisma', header('sqlite', 'sqlite', pothos)],
  ['prisma/postgres/schema.prisma', header('postgresql', 'postgres', '')],
];
const check = process.argv.includes('--check');
let stale = false;
for (const [path, head] of targets) {
  const next = `${head}\n${body}`;
  const url = new URL(`../${path}`, import.meta.url);
  let current = '';
  try {
    current = readFileSync(url, 'utf8');
  } catch {
    /* first run */
  }
  if (current === next) continue;
  if (check) {
    stale = true;
    console.error(`${path} is stale: run node scripts/sync-schemas.mjs`);
    continue;
  }
  writeFileSync(url, next);
  console.log(`wrote ${path}`);
}
if (stale) process.exit(1);
