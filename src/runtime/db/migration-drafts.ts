import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Provider } from './migrate.ts';
import { applyMigrations, migrationAdapterFor, prismaDir, readMigrations } from './migrate.ts';
import type { MigrationList, SchemaFilter } from './schema-engine.ts';
import { withSchemaEngine } from './schema-engine.ts';
import { withTemporaryDatabase } from './temporary-database.ts';

/** A migration whose migration.sql starts with this comment is written by hand (SQL Prisma cannot express). */
export const HAND_WRITTEN_MARK = '-- Hand-written';

interface HandWritten {
  tables: string[];
  indexes: Set<string>;
  /** Schema tables that hand-written SQL hangs indexes or triggers on. */
  extended: Set<string>;
}

export interface Draft {
  /** The migration SQL, or null when the committed migrations already match the schema. */
  script: string | null;
  warnings: string[];
}

// Tables SQLite creates behind a virtual table (FTS3/4/5, R*Tree), which the engine sees as plain tables.
const SHADOW_SUFFIXES = ['_config', '_content', '_data', '_docsize', '_idx', '_segdir', '_segments', '_stat', '_node', '_parent', '_rowid'];
const IDENT = String.raw`(?:"([^"]+)"|([\w$]+))`;
const IF_NOT_EXISTS = String.raw`(?:IF\s+NOT\s+EXISTS\s+)?`;

const namesOf = (sql: string, pattern: string): string[] =>
  [...sql.matchAll(new RegExp(pattern, 'gi'))].map((match) => match[1] ?? match[2] ?? '');

/**
 * The objects hand-written migrations add beside the schema. The engine does not know them, so a
 * draft would drop them: their tables are passed as external, and drops of their indexes are removed.
 */
const handWrittenObjects = (migrations: MigrationList): HandWritten => {
  const tables: string[] = [];
  const indexes = new Set<string>();
  const extended = new Set<string>();
  for (const { migrationFile } of migrations.migrationDirectories) {
    const content = migrationFile.content.tag === 'ok' ? migrationFile.content.value : '';
    if (!content.trimStart().startsWith(HAND_WRITTEN_MARK)) continue;
    const sql = content.replace(/--.*$/gm, '');
    for (const name of namesOf(sql, String.raw`CREATE\s+VIRTUAL\s+TABLE\s+${IF_NOT_EXISTS}${IDENT}`)) {
      tables.push(name, ...SHADOW_SUFFIXES.map((suffix) => `${name}${suffix}`));
    }
    tables.push(...namesOf(sql, String.raw`CREATE\s+TABLE\s+${IF_NOT_EXISTS}${IDENT}`));
    for (const name of namesOf(sql, String.raw`\bON\s+${IDENT}`)) extended.add(name);
    for (const name of namesOf(sql, String.raw`CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?${IF_NOT_EXISTS}${IDENT}`))
      indexes.add(name);
  }
  return { tables, indexes, extended };
};

const keepHandWrittenIndexes = (script: string, indexes: Set<string>): string =>
  script
    .replace(/^(?:-- DropIndex\n)?DROP INDEX (?:"[^"]+"\.)?"([^"]+)";\n?/gm, (statement: string, name: string) =>
      indexes.has(name) ? '' : statement,
    )
    .replace(/\n{3,}/g, '\n\n');

// SQLite changes some columns by copying the table into a new one, which loses the indexes and
// triggers that hand-written SQL added to it.
const rebuildWarnings = (script: string, extended: Set<string>): string[] =>
  namesOf(script, String.raw`CREATE\s+TABLE\s+"new_([^"]+)"`)
    .filter((table) => extended.has(table))
    .map(
      (table) =>
        `this migration rebuilds table "${table}", which hand-written migrations extend: re-create their indexes and triggers on it at the end of the migration`,
    );

const hasStatements = (script: string): boolean =>
  script
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .some((line) => line.trim() !== '' && !line.trim().startsWith('--'));

/**
 * The SQL that takes the provider's committed migrations to its schema.prisma, or null when they
 * already match. Runs the engine's `migrate dev` steps on a temporary database of that provider
 * (a SQLite file, or a database on TEST_POSTGRES_URL's server), which is dropped afterwards.
 */
export const draftMigration = async (
  provider: Provider,
  name: string,
  logger?: Pick<Logger, 'info' | 'debug'>,
  schemaContent?: string,
): Promise<Draft> => {
  const migrationsList = readMigrations(provider);
  const handWritten = handWrittenObjects(migrationsList);
  const filters: SchemaFilter = { externalTables: handWritten.tables, externalEnums: [] };
  const schemaPath = join(prismaDir(provider), 'schema.prisma');
  const schema = { files: [{ path: schemaPath, content: schemaContent ?? readFileSync(schemaPath, 'utf8') }] };
  return withTemporaryDatabase(provider, async (url) => {
    // createMigration fails on a database without _prisma_migrations, so the dev database is migrated first.
    await applyMigrations(url, logger);
    return withSchemaEngine(
      migrationAdapterFor(url),
      async (engine) => {
        // devDiagnostic replays the migrations on a shadow database and caches the result;
        // createMigration in the wasm engine has no shadow database of its own and reads that cache.
        const { action } = await engine.devDiagnostic({ migrationsList, filters });
        if (action.tag === 'reset') throw new Error(`${provider}: the migrations cannot be replayed: ${action.reason}`);
        const { migrationScript } = await engine.createMigration({ draft: false, migrationName: name, migrationsList, schema, filters });
        const script = migrationScript && keepHandWrittenIndexes(migrationScript, handWritten.indexes);
        if (!script || !hasStatements(script)) return { script: null, warnings: [] };
        return { script, warnings: rebuildWarnings(script, handWritten.extended) };
      },
      logger,
    );
  });
};
