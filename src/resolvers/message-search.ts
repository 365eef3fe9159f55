import { z } from 'zod';
import { Prisma } from '../generated/sqlite/client.ts';
import type { Message } from '../generated/sqlite/client.ts';
import { onPostgres } from '../runtime/settings.ts';
import type { RequestContext } from './context.ts';
import { validationFailed } from './errors.ts';
import { limitSchema } from './paging.ts';
import { ownSession } from './sessions.ts';
import { parseInput } from './validate.ts';

/** A stored message as a search answers it (docs/conversations.md, Search). */
export interface FoundMessage {
  id: string;
  waMessageId: string;
  chatId: string;
  chatLid: string | null;
  direction: string;
  fromMe: boolean;
  sender: string;
  senderLid: string | null;
  kind: string;
  /** the latest text: the edit when there is one */
  text: string | null;
  editedAt: Date | null;
  timestamp: Date;
  outgoingId: string | null;
}

export interface SearchPage {
  ok: true;
  items: FoundMessage[];
  total: number;
  limit: number;
  /** the next page's cursor; null on the last page */
  nextCursor: string | null;
}

/** Words as the SQLite index splits them: runs of letters, digits and marks (migration message_search_retention). */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
const MAX_WORDS = 16;

const dateInput = z.union([z.date(), z.iso.datetime({ offset: true }).transform((s) => new Date(s))], {
  error: 'must be an ISO 8601 date-time',
});

const searchSchema = z.object({
  q: z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .max(200)
    .refine((q) => (q.match(WORD)?.length ?? 0) > 0, 'must contain a letter or a digit')
    .refine((q) => (q.match(WORD)?.length ?? 0) <= MAX_WORDS, `must have at most ${MAX_WORDS} words`),
  chatId: z.string().min(1).max(200).optional(),
  from: dateInput.optional(),
  to: dateInput.optional(),
  limit: limitSchema,
  cursor: z.string().max(500).optional(),
});

interface Position {
  at: Date;
  id: string;
}

export const encodeCursor = (sessionId: string, { at, id }: Position): string =>
  Buffer.from(JSON.stringify([sessionId, at.getTime(), id])).toString('base64url');

/** The position a cursor of this session's search names; anything else (made up, another session's) is refused. */
const decodeCursor = (sessionId: string, cursor: string): Position => {
  const refused = validationFailed([{ path: 'cursor', message: 'is not a cursor of this session' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refused;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw refused;
  const [session, ms, id] = parsed as unknown[];
  if (session !== sessionId || typeof ms !== 'number' || !Number.isSafeInteger(ms) || typeof id !== 'string' || id.length > 64)
    throw refused;
  const at = new Date(ms);
  if (Number.isNaN(at.getTime())) throw refused;
  return { at, id };
};

/** SQLite: each word quoted (so `OR`, `*`, `"` or `:` mean nothing) and a prefix: all must match. */
const ftsQuery = (q: string): string => (q.toLowerCase().match(WORD) ?? []).map((word) => `"${word}"*`).join(' AND ');

/**
 * PostgreSQL: the input is split by the same parser and configuration as the index (to_tsvector 'simple'),
 * and each of its words, quoted, becomes a prefix term (`'word':*`), all of which must match. The
 * expression on the message is the index's (migration message_search_retention), so the index answers it.
 */
const PG_MATCH = (q: string) => Prisma.sql`to_tsvector('simple'::regconfig, COALESCE(m."editedText", m."text", '')) @@ (
    SELECT to_tsquery('simple'::regconfig, string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*', ' & '))
    FROM unnest(to_tsvector('simple'::regconfig, ${q})))`;

export const foundView = (row: Message): FoundMessage => ({
  id: row.id,
  waMessageId: row.waMessageId,
  chatId: row.chatId,
  chatLid: row.chatLid,
  direction: row.direction,
  fromMe: row.fromMe,
  sender: row.sender,
  senderLid: row.senderLid,
  kind: row.kind,
  text: row.editedText ?? row.text,
  editedAt: row.editedAt,
  timestamp: row.messageTimestamp,
  outgoingId: row.outgoingId,
});

/**
 * A session's stored messages whose latest text has every word of `q` (each as a word or a word's
 * start), in a chat and a time range when asked, newest first, a page at a time. Deleted messages are
 * not found. Input is checked before the session is looked up (a bad request is a 400 before a 404).
 */
export const searchMessages = async (ctx: RequestContext, sessionId: string, input: unknown): Promise<SearchPage> => {
  const { q, chatId, from, to, limit, cursor } = parseInput(searchSchema, input);
  const after = cursor === undefined ? undefined : decodeCursor(sessionId, cursor);
  await ownSession(ctx, sessionId);
  const postgres = onPostgres(ctx.settings);
  const source = postgres
    ? Prisma.sql`"Message" m WHERE m."sessionId" = ${sessionId} AND m."deletedAt" IS NULL AND ${PG_MATCH(q)}`
    : Prisma.sql`"MessageSearch" s JOIN "MessageSearchKey" k ON k."id" = s.rowid JOIN "Message" m ON m."id" = k."messageId"
        WHERE "MessageSearch" MATCH ${ftsQuery(q)} AND m."sessionId" = ${sessionId}`;
  const filters = [
    ...(chatId === undefined ? [] : [Prisma.sql`m."chatId" = ${chatId}`]),
    ...(from === undefined ? [] : [Prisma.sql`m."messageTimestamp" >= ${from}`]),
    ...(to === undefined ? [] : [Prisma.sql`m."messageTimestamp" < ${to}`]),
  ];
  const filtered = filters.length === 0 ? source : Prisma.sql`${source} AND ${Prisma.join(filters, ' AND ')}`;
  const paged = after
    ? Prisma.sql`${filtered} AND (m."messageTimestamp" < ${after.at} OR (m."messageTimestamp" = ${after.at} AND m."id" < ${after.id}))`
    : filtered;
  const [found, counted] = await Promise.all([
    ctx.db.$queryRaw<Array<{ id: string }>>`SELECT m."id" FROM ${paged} ORDER BY m."messageTimestamp" DESC, m."id" DESC LIMIT ${limit + 1}`,
    ctx.db.$queryRaw<Array<{ total: number | bigint }>>`SELECT COUNT(*) AS total FROM ${filtered}`,
  ]);
  const ids = found.slice(0, limit).map((r) => r.id);
  const rows = new Map((await ctx.db.message.findMany({ where: { id: { in: ids } } })).map((row) => [row.id, row]));
  const items = ids.flatMap((id) => {
    const row = rows.get(id);
    return row ? [row] : [];
  });
  const last = items.at(-1);
  return {
    ok: true,
    items: items.map(foundView),
    total: Number(counted[0]?.total ?? 0),
    limit,
    nextCursor: found.length > limit && last ? encodeCursor(sessionId, { at: last.messageTimestamp, id: last.id }) : null,
  };
};
