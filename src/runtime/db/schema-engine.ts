import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { MigrationList, SchemaEngine, SchemaFilter } from '@prisma/schema-engine-wasm';
import type { Logger } from 'pino';

// Prisma's native schema engine cannot be downloaded on our machines, so migrations run through its
// WebAssembly build, fed a driver adapter the way Prisma's own wasm runtime feeds it.

export type { MigrationList, SchemaEngine, SchemaFilter };

type EngineModule = typeof import('@prisma/schema-engine-wasm');
type GlueModule = EngineModule & { __wbg_set_wasm: (exports: WebAssembly.Exports) => void };

export const NO_FILTERS: SchemaFilter = { externalTables: [], externalEnums: [] };

let engineModule: Promise<EngineModule> | undefined;

// The engine arms a 10 s setTimeout that would hold the process (a CLI, a test worker) open after
// the work is done; unref'd, it still fires while something else keeps the process alive.
const unrefTimers = (glue: GlueModule): WebAssembly.ModuleImports => {
  const imports: WebAssembly.ModuleImports = { ...glue };
  for (const [name, value] of Object.entries(glue)) {
    if (!name.startsWith('__wbg_setTimeout_') || typeof value !== 'function') continue;
    imports[name] = (...args: unknown[]) => {
      const timer: unknown = Reflect.apply(value, undefined, args);
      if (timer && typeof timer === 'object' && 'unref' in timer && typeof timer.unref === 'function') timer.unref();
      return timer;
    };
  }
  return imports;
};

const loadEngineModule = (): Promise<EngineModule> => {
  engineModule ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    // Node 20 cannot import .wasm as a module: instantiate it here and bind the JS glue to it.
    const glue = (await import(join(dir, 'schema_engine_bg.js'))) as GlueModule;
    const module = new WebAssembly.Module(readFileSync(join(dir, 'schema_engine_bg.wasm')));
    const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': unrefTimers(glue) });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  return engineModule;
};

export interface EngineSession {
  engine: SchemaEngine;
  /** Frees the engine and closes every connection (and shadow database) it opened. */
  dispose: () => Promise<void>;
}

// The engine does not always dispose the adapters it asked for, and an open pg pool keeps a process
// alive, so every adapter handed out is remembered and closed with the session.
const tracking = (factory: SqlMigrationAwareDriverAdapterFactory, opened: SqlDriverAdapter[]): SqlMigrationAwareDriverAdapterFactory => {
  const remember = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    const dispose = adapter.dispose.bind(adapter);
    let disposed: Promise<void> | undefined;
    adapter.dispose = () => (disposed ??= dispose());
    opened.push(adapter);
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => remember(await factory.connect()),
    connectToShadowDb: async () => remember(await factory.connectToShadowDb()),
  };
};

export const openSchemaEngine = async (
  factory: SqlMigrationAwareDriverAdapterFactory,
  logger?: Pick<Logger, 'debug'>,
): Promise<EngineSession> => {
  const { SchemaEngine: Engine } = await loadEngineModule();
  const opened: SqlDriverAdapter[] = [];
  const log = (message: string) => logger?.debug({ engine: message }, 'schema engine');
  const engine = await Engine.new({ datamodels: undefined }, log, bindMigrationAwareSqlAdapterFactory(tracking(factory, opened)));
  let freed = false;
  return {
    engine,
    dispose: async () => {
      if (!freed) engine.free();
      freed = true;
      await Promise.all(opened.splice(0).map((adapter) => adapter.dispose()));
    },
  };
};

/** Runs one piece of work on a fresh engine and always releases it. */
export const withSchemaEngine = async <T>(
  factory: SqlMigrationAwareDriverAdapterFactory,
  work: (engine: SchemaEngine) => Promise<T>,
  logger?: Pick<Logger, 'debug'>,
): Promise<T> => {
  const session = await openSchemaEngine(factory, logger);
  try {
    return await work(session.engine);
  } finally {
    await session.dispose();
  }
};
