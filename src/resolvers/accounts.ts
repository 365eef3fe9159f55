import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Prisma } from '../generated/sqlite/client.ts';
import type { Caller, Deps, RequestContext } from './context.ts';
import { DomainError } from './errors.ts';
import { perDatabase } from './per-database.ts';
import { parseInput } from './validate.ts';

export interface AccountView {
  id: string;
  email: string;
  apiKey: string;
  createdAt: string;
}

/** Keys carry 256 random bits, so a fast unsalted hash is enough and allows an indexed lookup. */
export const hashApiKey = (apiKey: string): string => createHash('sha256').update(apiKey).digest('hex');

export const generateApiKey = (): string => `wak_${randomBytes(32).toString('base64url')}`;

const unauthenticated = () => new DomainError('UNAUTHENTICATED', 'A valid x-api-key header is required');

const AUTH_CACHE_MS = 5_000;
const authCaches = perDatabase<{ caller: Caller; until: number }>();

/**
 * Every request presents its key; a few seconds of memory saves a query on each. A key rotated by the
 * CLI (another process) stops working within that window.
 */
export const authenticate = async (deps: Pick<Deps, 'db'>, apiKey: string | undefined | null): Promise<Caller> => {
  if (!apiKey) throw unauthenticated();
  const hash = hashApiKey(apiKey);
  const authCache = authCaches(deps.db);
  const cached = authCache.get(hash);
  if (cached && cached.until > Date.now()) return cached.caller;
  const account = await deps.db.account.findUnique({ where: { apiKeyHash: hash } });
  if (!account) throw unauthenticated();
  const caller = { accountId: account.id, email: account.email, apiKey, createdAt: account.createdAt };
  if (authCache.size > 10_000) authCache.clear();
  authCache.set(hash, { caller, until: Date.now() + AUTH_CACHE_MS });
  return caller;
};

/** Right after the key, before anything about the request is looked at (docs/api-reference.md#errors). */
export const takeRequest = async (deps: Pick<Deps, 'rateLimit'>, caller: Caller): Promise<void> => {
  const retryAfterSeconds = await deps.rateLimit.take(caller.accountId);
  if (retryAfterSeconds !== null) {
    throw new DomainError('RATE_LIMITED', `Too many requests for this key; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
  }
};

export const me = (ctx: RequestContext): AccountView => ({
  id: ctx.caller.accountId,
  email: ctx.caller.email,
  apiKey: ctx.caller.apiKey,
  createdAt: ctx.caller.createdAt.toISOString(),
});

/** The caller's own account row for GraphQL, with plugin-prisma's `query`. */
export const meRow = (ctx: RequestContext, query: Pick<Prisma.AccountFindUniqueArgs, 'include' | 'select'> = {}) =>
  ctx.db.account.findUniqueOrThrow({ ...query, where: { id: ctx.caller.accountId } });

const emailSchema = z.object({ email: z.email() });

export const createAccount = async (deps: Pick<Deps, 'db'>, input: unknown, apiKey: string = generateApiKey()): Promise<AccountView> => {
  const { email } = parseInput(emailSchema, input);
  const existing = await deps.db.account.findUnique({ where: { email } });
  if (existing) throw new DomainError('CONFLICT', `An account with email ${email} already exists`);
  const account = await deps.db.account.create({ data: { email, apiKeyHash: hashApiKey(apiKey) } });
  return { id: account.id, email: account.email, apiKey, createdAt: account.createdAt.toISOString() };
};

export const rotateApiKey = async (deps: Pick<Deps, 'db'>, input: unknown): Promise<AccountView> => {
  const { email } = parseInput(emailSchema, input);
  const apiKey = generateApiKey();
  const account = await deps.db.account.findUnique({ where: { email } });
  if (!account) throw new DomainError('NOT_FOUND', `No account with email ${email}`);
  const updated = await deps.db.account.update({ where: { id: account.id }, data: { apiKeyHash: hashApiKey(apiKey) } });
  authCaches(deps.db).clear();
  return { id: updated.id, email: updated.email, apiKey, createdAt: updated.createdAt.toISOString() };
};

/** First-start convenience: BOOTSTRAP_EMAIL + BOOTSTRAP_API_KEY create one account if that email is new. */
export const bootstrapAccount = async (deps: Pick<Deps, 'db' | 'logger'>, email?: string, apiKey?: string): Promise<void> => {
  if (!email || !apiKey) return;
  const existing = await deps.db.account.findUnique({ where: { email } });
  if (existing) return;
  await createAccount(deps, { email }, apiKey);
  deps.logger.info({ email }, 'bootstrap account created');
};
