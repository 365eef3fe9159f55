import type { z } from 'zod';
import type { ErrorDetail } from './errors.ts';
import { formatPath, fromZodError, validationFailed } from './errors.ts';

export const NUL_MESSAGE = 'must not contain a NUL character';

interface Visit {
  value: unknown;
  key?: PropertyKey;
  parent?: Visit;
}

const pathTo = (visit: Visit, prefix: ReadonlyArray<PropertyKey>): string => {
  const keys: PropertyKey[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.unshift(at.key);
  return formatPath([...prefix, ...keys]) || '(body)';
};

/**
 * PostgreSQL refuses NUL in text and SQLite cuts text at it, so no input may carry one. Iterative, and
 * paths are built only for what is found, so a deeply nested body costs neither stack nor memory.
 */
export const nulDetails = (input: unknown, prefix: ReadonlyArray<PropertyKey> = []): ErrorDetail[] => {
  const found = new Map<string, ErrorDetail>();
  const pending: Visit[] = [{ value: input }];
  for (let i = 0; i < pending.length; i++) {
    const visit = pending[i];
    const { value } = visit;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) {
        const path = pathTo(visit, prefix);
        found.set(path, { path, message: NUL_MESSAGE });
      }
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => {
        pending.push({ value: item, key: index, parent: visit });
      });
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (!key.includes('\u0000')) {
          pending.push({ value: item, key, parent: visit });
          continue;
        }
        // The key itself is not echoed back, so its object is named instead.
        const path = pathTo(visit, prefix);
        found.set(path, { path, message: `keys ${NUL_MESSAGE}` });
      }
    }
  }
  return [...found.values()];
};

/** Parses input at a resolver's entry, so REST and GraphQL share one rule set. */
export const parseInput = <S extends z.ZodType>(schema: S, input: unknown, prefix: ReadonlyArray<PropertyKey> = []): z.output<S> => {
  const nul = nulDetails(input, prefix);
  const result = schema.safeParse(input);
  if (result.success && nul.length === 0) return result.data;
  const rules = result.success ? [] : (fromZodError(result.error, prefix).details ?? []);
  throw validationFailed([...nul, ...rules.filter((rule) => !nul.some((n) => n.path === rule.path))]);
};
