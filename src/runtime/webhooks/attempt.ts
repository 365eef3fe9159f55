import { createHmac, createSecretKey } from 'node:crypto';
import { request } from 'undici';
import type { Agent } from 'undici';

/** What a receiver answered to one attempt, or why there was no answer. */
export interface Answer {
  statusCode: number | null;
  /** the start of the answer's body */
  excerpt: string | null;
  error: string | null;
  latencyMs: number;
}

const EXCERPT_CHARS = 500;

/** The exponential backoff of attempt n (1-based), with full jitter over its upper half. */
export const retryDelay = (attempt: number, baseMs: number, maxMs: number, random = Math.random): number => {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
};

/** The Standard Webhooks payload; `data` is stored as the JSON it is sent as, placed as it is. */
export const payloadOf = (event: { type: string; data: string; createdAt: Date }): string =>
  `{"type":${JSON.stringify(event.type)},"timestamp":"${event.createdAt.toISOString()}","data":${event.data}}`;

/** Signs one payload for its `webhook-signature` header. */
export type Signer = (id: string, sentAt: Date, body: string) => string;

/**
 * Standard Webhooks' v1 signature: HMAC-SHA256 of `<id>.<unix seconds>.<body>` with the secret's bytes
 * (base64 after `whsec_`), in base64. The standardwebhooks package computes it in JavaScript
 * (fast-sha256), 14–15 µs for a 430-byte payload; Node's HMAC over a key imported once (a KeyObject, see
 * libsignal-fix.ts for why not a Buffer) 3–4 µs, the same bytes (test/unit/webhook-attempt.test.ts).
 */
export const signerOf = (secret: string): Signer => {
  const key = createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64'));
  return (id, sentAt, body) =>
    `v1,${createHmac('sha256', key)
      .update(`${id}.${Math.floor(sentAt.getTime() / 1000)}.${body}`)
      .digest('base64')}`;
};

export const isSuccess = (answer: Answer): boolean => answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300;

/** What is read of an answer's body at most: EXCERPT_CHARS characters take at most 4 bytes each. */
const EXCERPT_BYTES = 4 * EXCERPT_CHARS;

/** The start of a body, reading no more of it than the excerpt needs (the rest is dropped with its connection). */
const excerptOf = async (body: AsyncIterable<Buffer>): Promise<string> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= EXCERPT_BYTES) break;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARS);
};

const timedOut = (): Error => Object.assign(new Error('timed out'), { name: 'TimeoutError' });

/**
 * POSTs one signed payload. undici's request rather than fetch: no WHATWG request, response and streams
 * around each attempt (fetch cost about twice as much CPU per delivery). Redirects are not followed (an
 * attempt's answer is its status), as fetch's redirect: 'manual' did.
 *
 * The headers must come within `timeoutMs` (undici's own timer, which may fire up to a second late),
 * then the rest of the answer within what is left of it (one plain timer): an AbortSignal.timeout per
 * attempt cost about a fifth of the request's CPU (a microbenchmark of 4,000-request rounds, client and
 * receiver: 125 µs per request with it, 98 µs without). Only the excerpt's bytes of a body are read.
 */
export const post = async (
  agent: Agent,
  url: string,
  headers: { id: string; sentAt: Date; signature: string },
  body: string,
  timeoutMs: number,
): Promise<Answer> => {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const response = await request(url, {
      dispatcher: agent,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'wa-multisession-api-webhooks',
        'webhook-id': headers.id,
        'webhook-timestamp': String(Math.floor(headers.sentAt.getTime() / 1000)),
        'webhook-signature': headers.signature,
      },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    timer = setTimeout(() => response.body.destroy(timedOut()), Math.max(0, timeoutMs - (performance.now() - started)));
    const excerpt = await excerptOf(response.body);
    return { statusCode: response.statusCode, excerpt, error: null, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    return { statusCode: null, excerpt: null, error: reasonOf(err, timeoutMs), latencyMs: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
};

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Why an attempt got no answer: what went wrong (refused address, connection refused...) may be the cause of a wrapping error. */
export const reasonOf = (err: unknown, timeoutMs: number): string => {
  const e = err as Error & { code?: string };
  if (e.name === 'TimeoutError' || (e.code !== undefined && TIMEOUT_CODES.has(e.code))) return `no answer within ${timeoutMs} ms`;
  return e.cause instanceof Error ? e.cause.message : e.message;
};

export interface FailureInput {
  answer: Answer;
  /** this attempt's number (1-based) */
  attempts: number;
  at: Date;
  eventCreatedAt: Date;
  /** the endpoint's current run of failures, if one has started */
  failingSince: Date | null;
  retryForMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** What a failed attempt means for its delivery (retried later, or given up) and for its endpoint (disabled, or failing since when). */
export const failureOf = (input: FailureInput) => {
  const { answer, at, retryForMs } = input;
  const lastError = answer.error ?? `HTTP ${answer.statusCode}`;
  const gone = answer.statusCode === 410;
  const failingSince = input.failingSince ?? at;
  const failingTooLong = at.getTime() - failingSince.getTime() >= retryForMs;
  const expired = at.getTime() - input.eventCreatedAt.getTime() >= retryForMs;
  const disabledReason = gone
    ? `The endpoint answered 410 Gone at ${at.toISOString()}`
    : failingTooLong
      ? `Every delivery failed from ${failingSince.toISOString()} to ${at.toISOString()} (last: ${lastError})`
      : null;
  const delivery: { status: 'FAILED' | 'PENDING'; lastError: string; nextAttemptAt?: Date } =
    gone || expired || failingTooLong
      ? {
          status: 'FAILED',
          lastError: gone
            ? 'the endpoint answered 410 Gone'
            : expired
              ? `gave up after retrying for ${retryForMs} ms (last: ${lastError})`
              : lastError,
        }
      : {
          status: 'PENDING',
          lastError,
          nextAttemptAt: new Date(at.getTime() + retryDelay(input.attempts, input.retryBaseMs, input.retryMaxMs)),
        };
  return { delivery, disabledReason, failingSince };
};
