import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'prisma/config';

// Prisma's CLI wants a native schema engine even for `generate`, and none can be downloaded here.
// `generate` never runs it, so any executable satisfies the check; migrations go through
// scripts/migrate (the WebAssembly engine) instead.
if (!process.env.PRISMA_SCHEMA_ENGINE_BINARY) {
  const stub = fileURLToPath(new URL('./scripts/no-schema-engine.sh', import.meta.url));
  if (existsSync(stub)) process.env.PRISMA_SCHEMA_ENGINE_BINARY = stub;
}

export default defineConfig({
  schema: 'prisma/sqlite/schema.prisma',
});
