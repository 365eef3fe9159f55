import { createHash, randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { OutgoingMessage } from '../generated/sqlite/client.ts';
import type { Deps, RequestContext } from './context.ts';
import { DomainError } from './errors.ts';
import { perDatabase } from './per-database.ts';

// uuid's own source of randomness is crypto.getRandomValues, about 25 µs a call on Node 24 (its WebCrypto
// checks); 16 bytes cut from a pool filled 4 KiB at a time, as Node's randomUUID does, cost a fraction.
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;
const random16 = (): Uint8Array => {
  if (randomOffset + 16 > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomOffset = 0;
  }
  randomOffset += 16;
  return randomPool.subarray(randomOffset - 16, randomOffset);
};
// The last id's time and counter: ids made in the same millisecond count up (as uuid's own v7 does
// without options), so the ids of one process sort in the order they were made (the queue's order).
let lastMsecs = Number.NEGATIVE_INFINITY;
let lastSeq = 0;
/** A UUID version 7: the time of day first, then a counter within the millisecond, then random bits. */
const newRecordId = (): string => {
  const random = random16();
  const now = Date.now();
  if (now > lastMsecs) {
    lastMsecs = now;
    // uuid's start of a millisecond's counter: 31 random bits
    lastSeq = (((random[6] ?? 0) & 0x7f) << 24) | ((random[7] ?? 0) << 16) | ((random[8] ?? 0) << 8) | (random[9] ?? 0);
  } else {
    lastSeq = (lastSeq + 1) | 0;
    if (lastSeq === 0) lastMsecs += 1;
  }
  return uuidv7({ random, msecs: lastMsecs, seq: lastSeq });
};

const IN_PROGRESS = 0;
/** A request that was running when the process stopped; its retry takes the key over (see releaseUnfinished). */
const CUT_OFF = 1;
/** How long a key is remembered; a retry after that is a new request. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600 * 1000;
const PURGE_EVERY_MS = 3600 * 1000;
// When each database's expired keys were last deleted; the purge rides on a request, so no timer is needed.
const lastPurges = perDatabase<number>();

const purgeExpired = async (ctx: RequestContext): Promise<void> => {
  const now = ctx.now().getTime();
  const last = lastPurges(ctx.db);
  if ((last.get('') ?? 0) > now - PURGE_EVERY_MS) return;
  last.set('', now);
  await ctx.db.idempotentRequest.deleteMany({ where: { createdAt: { lt: new Date(now - IDEMPOTENCY_KEY_TTL_MS) } } });
};

export interface Replayable<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** What a key is bound to: the actual method and path (session id included), and the body sent. */
export interface IdempotentRequest {
  method: string;
  path: string;
  body: unknown;
}

/** JSON with object keys sorted, so a retry whose client orders fields differently is the same body. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

/** Ends a request whose key already has an answer: the first answer is given again, nothing runs. */
class Replayed extends Error {}

/**
 * Runs a send once per Idempotency-Key: a retry with the same key gets the first answer and sends nothing.
 * Keys are scoped to the account, method and path, so the same key on another session is another request;
 * on the same route with another body it is a client error (409), never the other request's answer.
 * The key is looked at only when the resolver has found the body valid and calls `admit(ctx)`
 * (docs/api-reference.md#errors: a request is validated before anything else), so an invalid body is a 400 whatever
 * its key. A failed attempt frees the key, so the caller can retry it.
 */
export const once = async <T>(
  ctx: RequestContext,
  key: string | undefined,
  request: IdempotentRequest,
  run: (ctx: RequestContext) => Promise<{ status: number; body: T }>,
  keyName = 'Idempotency-Key',
): Promise<Replayable<T>> => {
  if (!key) return { ...(await run(ctx)), replayed: false };
  if (key.length > MAX_KEY_LENGTH) {
    throw new DomainError('VALIDATION_FAILED', `${keyName} is too long`, {
      details: [{ path: keyName, message: `must be at most ${MAX_KEY_LENGTH} characters` }],
    });
  }
  // Stored in the existing columns: the scope goes into the key, the body's hash beside the route.
  const id = { accountId: ctx.caller.accountId, key: `${request.method} ${request.path} ${key}` };
  const route = `${request.method} ${request.path} sha256:${createHash('sha256')
    .update(canonical(request.body ?? null))
    .digest('hex')}`;
  let claimed = false;
  let resumed = false;
  let claimedAt = 0;
  let records = 0;
  let replay: Replayable<T> | undefined;
  const admit = async (): Promise<void> => {
    if (claimed) return;
    await purgeExpired(ctx);
    let existing = await ctx.db.idempotentRequest.findUnique({ where: { accountId_key: id } });
    if (existing && existing.createdAt.getTime() <= ctx.now().getTime() - IDEMPOTENCY_KEY_TTL_MS) {
      await ctx.db.idempotentRequest.deleteMany({ where: { ...id, createdAt: existing.createdAt } });
      existing = null;
    }
    if (existing) {
      if (existing.route !== route)
        throw new DomainError('CONFLICT', 'This Idempotency-Key was already used on this route with another body');
      // Several nodes: a request whose node died or lost its lease while running it (a forwarded send
      // whose hop broke) is taken over by its retry, as after a stop.
      const orphaned =
        existing.status === IN_PROGRESS &&
        ctx.ownership.clustered &&
        existing.nodeId !== ctx.ownership.nodeId &&
        !(await ctx.ownership.alive(existing.nodeId));
      if (existing.status === IN_PROGRESS && !orphaned)
        throw new DomainError('CONFLICT', 'A request with this Idempotency-Key is still running');
      if (existing.status === CUT_OFF || orphaned) {
        const taken = await ctx.db.idempotentRequest.updateMany({
          where: { ...id, status: existing.status, nodeId: existing.nodeId },
          data: { status: IN_PROGRESS, nodeId: ctx.ownership.nodeId },
        });
        if (taken.count === 0) throw new DomainError('CONFLICT', 'A request with this Idempotency-Key is still running');
        claimed = true;
        resumed = true;
        claimedAt = existing.createdAt.getTime();
        return;
      }
      replay = { status: existing.status, body: JSON.parse(existing.body) as T, replayed: true };
      throw new Replayed();
    }
    const now = ctx.now();
    try {
      await ctx.db.idempotentRequest.create({
        data: { ...id, route, status: IN_PROGRESS, body: '', createdAt: now, nodeId: ctx.ownership.nodeId },
      });
    } catch {
      throw new DomainError('CONFLICT', 'A request with this Idempotency-Key is still running');
    }
    claimed = true;
    claimedAt = now.getTime();
  };
  // Record ids derived from the key (and when it was taken), in the order the request writes them: the
  // retry of a request cut off by a stop finds what the first attempt wrote instead of sending it again.
  const nextRecordId = (): string => {
    if (!claimed) return newRecordId();
    const hex = createHash('sha256').update(`${id.accountId}\u0000${id.key}\u0000${claimedAt}\u0000${records++}`).digest('hex');
    const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };
  try {
    const result = await run({ ...ctx, idempotency: { admit, nextRecordId, resumed: () => resumed } });
    if (claimed) {
      // Only while this node still holds the key: a node paused past its lease finds it taken over.
      await ctx.db.idempotentRequest.updateMany({
        where: { ...id, nodeId: ctx.ownership.nodeId },
        data: { status: result.status, body: JSON.stringify(result.body) },
      });
    } else {
      ctx.logger.error({ path: request.path }, 'a route that honours Idempotency-Key finished without looking at the key');
    }
    return { ...result, replayed: false };
  } catch (err) {
    if (err instanceof Replayed && replay) return replay;
    // A retry of a cut-off request that fails too leaves the key released, with the first attempt's records still found by the next retry.
    const mine = { ...id, nodeId: ctx.ownership.nodeId };
    if (claimed && resumed) await ctx.db.idempotentRequest.updateMany({ where: mine, data: { status: CUT_OFF } }).catch(() => undefined);
    else if (claimed) await ctx.db.idempotentRequest.deleteMany({ where: mine }).catch(() => undefined);
    throw err;
  }
};

const MAX_KEY_LENGTH = 200;

/**
 * GraphQL's door to `once`: a send mutation's `idempotencyKey` argument, else the request's
 * Idempotency-Key header. The scope is the account and the operation (the mutation, and with the header
 * its place in the document, so two sends of one request do not share the header's key); the input is
 * the mutation's arguments, so the same key with other arguments is a CONFLICT, as on REST.
 */
export const sendOnce = async <T>(
  ctx: RequestContext,
  { key, operation }: { key: string | null | undefined; operation: { field: string; responseKey: string } },
  input: unknown,
  send: (ctx: RequestContext) => Promise<T>,
): Promise<T> => {
  const fromArgument = key !== null && key !== undefined;
  const scope = fromArgument ? operation.field : `${operation.field} ${operation.responseKey}`;
  const result = await once(
    ctx,
    fromArgument ? key : ctx.idempotencyKeyHeader,
    { method: 'GRAPHQL', path: scope, body: input },
    async (gated) => ({ status: 200, body: await send(gated) }),
    fromArgument ? 'idempotencyKey' : 'Idempotency-Key',
  );
  return result.body;
};

/** Called by a send's resolver once its input is valid; on a REST request with an Idempotency-Key, looks at the key. */
export const admit = async (ctx: RequestContext): Promise<void> => {
  await ctx.idempotency?.admit();
};

/**
 * The id for the next record a request writes (see nextRecordId in `once`); without a key a UUID
 * version 7, whose leading time keeps a batch of new records on the last pages of the table's primary
 * key instead of one page each (a third less SQLite CPU per inserted record on a table of 50,000).
 */
export const recordIdFor = (ctx: RequestContext): string => ctx.idempotency?.nextRecordId() ?? newRecordId();

/**
 * On the retry of a request cut off by a stop: the record its first attempt wrote under this id, if
 * any (being sent again since the start, or sent). Otherwise null, without a query.
 */
export const earlierAttempt = async (ctx: RequestContext, recordId: string): Promise<OutgoingMessage | null> =>
  ctx.idempotency?.resumed() ? ctx.db.outgoingMessage.findUnique({ where: { id: recordId } }) : null;

/**
 * At start: a key whose request was running when the process stopped would answer "still running"
 * for a day. It is released: the next retry with the same body runs, and finds by their ids the
 * records the cut-off attempt wrote (which the start sends again themselves) instead of writing and
 * sending them twice. Only keys taken before this process started are touched, and only on a single node.
 */
export const releaseUnfinished = async (deps: Pick<Deps, 'db' | 'ownership'>, startedAt: Date): Promise<number> => {
  // Several nodes: other nodes' keys may be running now; a retry takes over those of a node that is gone (in `once`).
  if (deps.ownership.clustered) return 0;
  const released = await deps.db.idempotentRequest.updateMany({
    where: { status: IN_PROGRESS, createdAt: { lt: startedAt } },
    data: { status: CUT_OFF },
  });
  return released.count;
};
