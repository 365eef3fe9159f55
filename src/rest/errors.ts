import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { DomainError, ERROR_STATUS, validationFailed } from '../resolvers/errors.ts';
import type { ErrorDetail } from '../resolvers/errors.ts';
import { NUL_MESSAGE, nulDetails } from '../resolvers/validate.ts';

export const sendError = (res: Response, error: DomainError): void => {
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  res.status(ERROR_STATUS[error.code]).json({
    ok: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    },
  });
};

export const notFoundRoute: RequestHandler = (req, res) => {
  sendError(res, new DomainError('NOT_FOUND', `No route ${req.method} ${req.originalUrl.split('?')[0]}`));
};

interface BodyParserError {
  type?: string;
  status?: number;
}

const bodyParserError = (err: unknown): DomainError | null => {
  const type = typeof err === 'object' && err !== null ? (err as BodyParserError).type : undefined;
  if (type === 'entity.parse.failed') return new DomainError('INVALID_JSON', 'The request body is not valid JSON');
  if (type === 'entity.too.large') return new DomainError('PAYLOAD_TOO_LARGE', 'The request body is too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported');
  }
  return null;
};

/** Express decodes path params itself; on a malformed escape it throws a URIError marked 400, without the param's name. */
const malformedPathError = (err: unknown): DomainError | null =>
  err instanceof URIError && (err as URIError & { status?: number }).status === 400
    ? new DomainError('VALIDATION_FAILED', 'The request path is not valid', {
        details: [{ path: 'path', message: 'contains a malformed percent-encoding' }],
      })
    : null;

/** The one place a thrown value becomes an HTTP answer; internals stay in the log. */
export const errorHandler =
  (logger: Logger): ErrorRequestHandler =>
  (err: unknown, req, res, _next) => {
    const known = err instanceof DomainError ? err : (bodyParserError(err) ?? malformedPathError(err));
    if (known) {
      sendError(res, known);
      return;
    }
    const requestId = String(req.id ?? '');
    logger.error({ err, requestId, method: req.method, url: req.originalUrl }, 'unhandled error');
    sendError(res, new DomainError('INTERNAL', `Internal error (request id ${requestId})`));
  };

/** A body that is not application/json is a 415 (docs/errors.md), before anything else is looked at. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    next(new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json'));
    return;
  }
  next();
};

/** Path and query values reach the database without parseInput, so they get its NUL rule here (see nulDetails). */
export const refuseNul: RequestHandler = (req, _res, next) => {
  // req.path is still percent-encoded, and Node refuses a raw NUL in a request line.
  const details: ErrorDetail[] = /%00/.test(req.path) ? [{ path: 'path', message: NUL_MESSAGE }] : [];
  for (const [name, value] of Object.entries(req.query)) {
    if (!name.includes('\u0000')) details.push(...nulDetails(value, [name]));
    else if (!details.some((d) => d.path === 'query')) details.push({ path: 'query', message: `keys ${NUL_MESSAGE}` });
  }
  next(details.length > 0 ? validationFailed(details) : undefined);
};

/** No body of the spec nests more than a few levels; far deeper ones are refused before any route walks them. */
export const MAX_BODY_DEPTH = 32;

const deeperThan = (value: unknown, max: number): boolean => {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: at, depth } = pending.pop() as { value: unknown; depth: number };
    if (typeof at !== 'object' || at === null) continue;
    if (depth >= max) return true;
    for (const item of Object.values(at)) pending.push({ value: item, depth: depth + 1 });
  }
  return false;
};

/** An Idempotency-Key hashes the body and routes validate it; both walk it, so its depth is bounded first. */
export const refuseDeepBody: RequestHandler = (req, _res, next) => {
  next(
    deeperThan(req.body, MAX_BODY_DEPTH)
      ? validationFailed([{ path: '(body)', message: `must not be nested deeper than ${MAX_BODY_DEPTH} levels` }])
      : undefined,
  );
};

/**
 * Express answers OPTIONS itself, in text/plain. Every answer of the API is JSON or empty, so that answer
 * goes out as 204 with the same Allow header and no body.
 */
export const optionsWithoutBody: RequestHandler = (req, res, next) => {
  if (req.method === 'OPTIONS') {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (res.headersSent || res.getHeader('allow') === undefined || !String(res.getHeader('content-type')).startsWith('text/plain')) {
        return end(...args);
      }
      res.status(204);
      for (const header of ['content-type', 'content-length', 'x-content-type-options']) res.removeHeader(header);
      return end();
    }) as typeof res.end;
  }
  next();
};
