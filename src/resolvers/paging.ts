import { z } from 'zod';

export const MAX_LIMIT = 200;

/** decisions.md: above the maximum is lowered to it; non-integers and values below 1 are refused. */
export const limitSchema = z.coerce
  .number()
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .default(50)
  .transform((n) => Math.min(n, MAX_LIMIT));

export const pageSchema = z.object({
  page: z.coerce.number().int('must be an integer').min(1, 'must be at least 1').default(1),
  limit: limitSchema,
});
