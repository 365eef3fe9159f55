import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, SqlQuery } from '@prisma/driver-adapter-utils';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine } from '@prisma/schema-engine-wasm';

/**
 * Prisma's native schema engine cannot be downloaded on our machines, so migrations run through its
 * WebAssembly build, driven here with a driver adapter as Prisma's own wasm runtime would.
 */

type EngineModule = typeof import('@prisma/schema-engine-wasm');

let engineModule: Promise<EngineModule> | undefined;

const loadEngineModule = (): Promise<EngineModule> => {
  engineModule ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    // Node 20 cannot import .wasm as a module: instantiate it ourselves and bind the JS glue to it.
    const glue = (await import(join(dir, 'schema_engine_bg.js'))) as EngineModule & {
      __wbg_set_wasm: (exports: WebAssembly.Exports) => void;
    };
    const module = new WebAssembly.Module(readFileSync(join(dir, 'schema_engine_bg.wasm')));
    const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': glue as unknown as WebAssembly.ModuleImports });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  return engineModule;
};

/** The engine replays migration files through executeRaw, which runs one statement only on SQLite. */
const scriptAwareSqlite = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
  const executeRaw = adapter.executeRaw.bind(adapter);
  adapter.executeRaw = async (query: SqlQuery) => {
    if (query.args.length === 0 && query.sql.split(';').filter((s) => s.trim()).length > 1) {
      await adapter.executeScript(query.sql);
      return 0;
    }
    return executeRaw(query);
  };
  return adapter;
};

export const withSqliteScripts = (factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory => ({
  provider: factory.provider,
  adapterName: factory.adapterName,
  connect: async () => scriptAwareSqlite(await factory.connect()),
  connectToShadowDb: async () => scriptAwareSqlite(await factory.connectToShadowDb()),
});

export interface EngineHandle {
  engine: SchemaEngine;
  dispose: () => void;
}

export const openEngine = async (
  factory: SqlMigrationAwareDriverAdapterFactory,
  datamodels: Array<[path: string, content: string]> = [],
  log: (message: string) => void = () => undefined,
): Promise<EngineHandle> => {
  const { SchemaEngine: Engine } = await loadEngineModule();
  const engine = await Engine.new({ datamodels: datamodels.length > 0 ? datamodels : undefined }, log, bindMigrationAwareSqlAdapterFactory(factory));
  return {
    engine,
    dispose: () => {
      try {
        engine.free();
      } catch {
        // already freed
      }
    },
  };
};

export type { MigrationList };
