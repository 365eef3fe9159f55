import type { z } from 'zod';
import { fromZodError } from './errors.ts';

/** Parses input at a resolver's entry, so REST and GraphQL share one rule set. */
export const parseInput = <S extends z.ZodType>(schema: S, input: unknown, prefix: ReadonlyArray<PropertyKey> = []): z.output<S> => {
  const result = schema.safeParse(input);
  if (!result.success) throw fromZodError(result.error, prefix);
  return result.data;
};
