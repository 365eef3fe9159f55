import { z } from 'zod';

export const MAX_LIMIT = 200;
/** A page's size when the request names none (REST's `limit`, a connection's `first`/`last`). */
export const DEFAULT_LIMIT = 50;

const DIGITS = /^\d+$/;

/**
 * Query values arrive as strings, body and GraphQL values as numbers. Number() would also take "0x10",
 * "1e1", " 1" and "" (as 0), none of which is an integer as the API means it. Not .int(): it refuses
 * integers past 2^53, which the API lowers to the maximum like any other.
 */
export const integerInput = (min: number) =>
  z
    .union([z.number(), z.string().regex(DIGITS).transform(Number)], { error: 'must be an integer' })
    .pipe(z.number().refine(Number.isInteger, { error: 'must be an integer', abort: true }).min(min, `must be at least ${min}`));

/** docs/api-reference.md#conventions: above the maximum is lowered to it; non-integers and values below 1 are refused. */
export const limitSchema = integerInput(1)
  .default(DEFAULT_LIMIT)
  .transform((n) => Math.min(n, MAX_LIMIT));

/** Keeps the row offset ((page - 1) * limit) within a 32-bit integer for every database and driver. */
export const MAX_PAGE = 10_000_000;

export const pageSchema = z.object({
  page: integerInput(1)
    .pipe(z.number().max(MAX_PAGE, `must be at most ${MAX_PAGE}`))
    .default(1),
  limit: limitSchema,
});
