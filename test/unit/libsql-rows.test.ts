import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import { afterAll, describe, expect, it } from 'vitest';

// patches/@libsql+client+0.17.4.patch builds a row from the array the statement gave (positions, length)
// with each column's name added to it; the rows read as libsql's own did.
describe('libsql rows (patched)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'libsql-rows-'));
  const client = createClient({ url: `file:${join(dir, 'rows.db')}` });
  afterAll(() => {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a value by position and by column name; a repeated name keeps the first', async () => {
    const { rows, columns } = await client.execute(`SELECT 1 AS "n", 'two' AS "s", 3 AS "n", NULL AS "none"`);
    expect(columns).toEqual(['n', 's', 'n', 'none']);
    const [row] = rows;
    expect(row?.length).toBe(4);
    expect([row?.[0], row?.[1], row?.[2], row?.[3]]).toEqual([1, 'two', 3, null]);
    expect(row?.n).toBe(1);
    expect(row?.s).toBe('two');
    expect(row?.none).toBeNull();
  });

  it('keeps a column named like a position or like the length to its position, and one named __proto__ as a value', async () => {
    const [row] = (await client.execute(`SELECT 'a' AS "1", 'b' AS "length", 'c' AS "__proto__"`)).rows;
    expect(row?.length).toBe(3);
    expect(row?.[1]).toBe('b');
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe('c');
    expect(Array.isArray(Object.getPrototypeOf(row))).toBe(true);
  });
});
