import type { ZodError } from 'zod';

/**
 * The one table of the API's error codes and their HTTP statuses (docs/errors.md). REST answers with the status
 * (src/rest/errors.ts); GraphQL carries the code in `extensions.code` and uses the status where the
 * request as a whole is refused (src/runtime/graphql.ts).
 */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  NOT_FOUND: 404,
  SESSION_NOT_CONNECTED: 409,
  CONFLICT: 409,
  MESSAGE_NOT_EDITABLE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  QUOTA_EXCEEDED: 429,
  RATE_LIMITED: 429,
  NETWORK_ERROR: 502,
  MEDIA_GONE: 410,
  INTERNAL: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  /** Seconds a client should wait before retrying (QUOTA_EXCEEDED, RATE_LIMITED). */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; retryAfterSeconds?: number } = {}) {
    // An answer to the client, not a fault of the service: where it was raised tells nobody anything, and
    // capturing the stack was the largest single item of a refused request's CPU.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'DomainError';
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Every code above, for the doors that must make sure nothing else reaches a client. */
export const ERROR_CODES: ReadonlySet<string> = new Set(Object.keys(ERROR_STATUS));

export const notFound = (what: string): DomainError => new DomainError('NOT_FOUND', `${what} not found`);

export const validationFailed = (details: ErrorDetail[]): DomainError =>
  new DomainError('VALIDATION_FAILED', 'The request is not valid', { details });

/** `buttons[3].text` style paths, as docs/errors.md shows them. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    const name = String(key);
    return acc === '' ? name : `${acc}.${name}`;
  }, '');

export const fromZodError = (error: ZodError, prefix: ReadonlyArray<PropertyKey> = []): DomainError =>
  validationFailed(
    error.issues.map((issue) => ({
      path: formatPath([...prefix, ...issue.path]) || '(body)',
      message: issue.message,
    })),
  );

interface DatabaseError {
  code?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown } } };
}

/**
 * A unique key already taken, as a concurrent writer can leave it between a read and a write. Prisma
 * reports it as P2002 for model calls, but as P2010 (raw query failed) for $executeRaw/$queryRaw, where
 * only the driver adapter's error kind tells it apart.
 */
export const isUniqueViolation = (err: unknown): boolean => {
  if (typeof err !== 'object' || err === null) return false;
  const { code, meta } = err as DatabaseError;
  return code === 'P2002' || (code === 'P2010' && meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation');
};
