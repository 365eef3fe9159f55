import { Prisma } from '../../generated/sqlite/client.ts';
import type { Provider } from './migrate.ts';

export type JsonColumnType = 'text' | 'integer' | 'bigint' | 'boolean' | 'timestamp';
export type JsonCell = string | number | boolean | Date | null;

/**
 * Rows of a batch write as a table read from one JSON parameter: `SELECT <columns> FROM json_each(?)`
 * (SQLite) or `json_array_elements(?)` (PostgreSQL), for `INSERT ... SELECT` and `UPDATE ... FROM`.
 * A multi-row VALUES list costs Prisma and the driver a parameter per cell (a 16-row batch of 10
 * columns: 160) and SQLite a parse of the whole list; one JSON text halves the CPU per row and its SQL
 * is the same for every batch size.
 *
 * Timestamps are written as the driver adapter writes a Date, so a value compares with the column's
 * other values: on SQLite ISO 8601 text with `+00:00` (compared as text), on PostgreSQL a `timestamp(3)`
 * holding UTC.
 */
export const jsonRows = (
  provider: Provider,
  columns: ReadonlyArray<readonly [name: string, type: JsonColumnType]>,
): ((rows: JsonCell[][]) => Prisma.Sql) => {
  const postgres = provider === 'postgres';
  const cast = { text: '', integer: '::integer', bigint: '::bigint', boolean: '::boolean', timestamp: '::timestamp(3)' } as const;
  // the names and types are the caller's constants, never input
  const select = Prisma.raw(
    columns.map(([name, type], i) => (postgres ? `(value->>${i})${cast[type]} AS "${name}"` : `value->>${i} AS "${name}"`)).join(', '),
  );
  // The rows of a batch mostly share their times (an event's creation, a lease): each is formatted once.
  let lastTime = Number.NaN;
  let lastText = '';
  const time = (v: Date) => {
    const ms = v.getTime();
    if (ms !== lastTime) {
      lastTime = ms;
      lastText = postgres ? v.toISOString() : v.toISOString().replace('Z', '+00:00');
    }
    return lastText;
  };
  const cell = (v: JsonCell) => (v instanceof Date ? time(v) : v);
  return (rows) => {
    const json = JSON.stringify(rows.map((row) => row.map(cell)));
    return postgres
      ? Prisma.sql`SELECT ${select} FROM json_array_elements(${json}::json) AS j(value)`
      : Prisma.sql`SELECT ${select} FROM json_each(${json})`;
  };
};

/**
 * A column test SQLite must not answer from an index. A batch statement joins its JSON rows to a table
 * by key and also tests a column such as status; SQLite's planner, which has no statistics here, takes
 * that column's index as the outer loop and walks every row with that status, scanning the batch for
 * each (a cost that grows with the table's backlog). The unary + leaves it the key; PostgreSQL plans
 * with statistics of its own and gets the plain test.
 */
export const notIndexed = (provider: Provider, column: string): Prisma.Sql => Prisma.raw(provider === 'sqlite' ? `+${column}` : column);
