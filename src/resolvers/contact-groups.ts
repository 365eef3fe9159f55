import { z } from 'zod';
import { Prisma } from '../generated/sqlite/client.ts';
import type { ContactGroup } from '../generated/sqlite/client.ts';
import type { RequestContext } from './context.ts';
import { contactIdsOf, jidFromPath } from './contacts.ts';
import { DomainError, isUniqueViolation, notFound } from './errors.ts';
import { toJid } from './jids.ts';
import { parseInput } from './validate.ts';

export interface ContactGroupView {
  id: string;
  name: string;
  description: string;
  color: string;
  isSmartGroup: boolean;
  contactCount: number;
}

export type ContactGroupWithCount = ContactGroup & { _count: { members: number } };

export const withMemberCount = { _count: { select: { members: true } } } as const;

export const contactGroupView = (row: ContactGroupWithCount): ContactGroupView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  color: row.color,
  isSmartGroup: row.isSmartGroup,
  contactCount: row._count.members,
});

export const createSchema = z.object({
  name: z.string().trim().min(1, 'is required').max(100),
  description: z.string().max(500).optional(),
  color: z
    .string()
    .regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'must be a hex colour like #1a2b3c or #abc')
    .optional(),
  isSmartGroup: z.boolean().optional(),
});

export const membersSchema = z.object({
  jids: z.array(z.string()).min(1, 'at least one JID is required').max(500),
});

type GroupQuery = Pick<Prisma.ContactGroupFindManyArgs, 'include' | 'select' | 'cursor' | 'take' | 'skip'>;

/** `query` is plugin-prisma's selection when GraphQL calls (its count comes through it too). */
export const listContactGroups = (
  ctx: RequestContext,
  query: GroupQuery = { include: withMemberCount },
): Promise<ContactGroupWithCount[]> =>
  ctx.db.contactGroup.findMany({
    ...query,
    where: { accountId: ctx.caller.accountId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  }) as Promise<ContactGroupWithCount[]>;

export const getContactGroup = async (ctx: RequestContext, groupId: string): Promise<ContactGroupWithCount> => {
  const row = await ctx.db.contactGroup.findFirst({
    where: { id: groupId, accountId: ctx.caller.accountId },
    include: withMemberCount,
  });
  if (!row) throw notFound('Contact group');
  return row;
};

export const countContactGroups = (ctx: RequestContext): Promise<number> =>
  ctx.db.contactGroup.count({ where: { accountId: ctx.caller.accountId } });

/** One contact group's row for GraphQL, with plugin-prisma's `query`. */
export const getContactGroupRow = async (
  ctx: RequestContext,
  groupId: string,
  query: Pick<Prisma.ContactGroupFindFirstArgs, 'include' | 'select'> = {},
): Promise<ContactGroup> => {
  const row = await ctx.db.contactGroup.findFirst({ ...query, where: { id: groupId, accountId: ctx.caller.accountId } });
  if (!row) throw notFound('Contact group');
  return row;
};

export const createContactGroup = async (ctx: RequestContext, input: unknown): Promise<ContactGroupWithCount> => {
  const data = parseInput(createSchema, input);
  const accountId = ctx.caller.accountId;
  // The unique key decides, not a read first: two requests for one name can both find it free.
  try {
    return await ctx.db.contactGroup.create({ data: { accountId, ...data }, include: withMemberCount });
  } catch (err) {
    if (isUniqueViolation(err)) throw new DomainError('CONFLICT', `A contact group named "${data.name}" already exists`);
    throw err;
  }
};

export interface AddMembersResult {
  ok: true;
  added: number;
  errors: Array<{ jid: string; reason: string }>;
}

export const addContactGroupMembers = async (ctx: RequestContext, groupId: string, input: unknown): Promise<AddMembersResult> => {
  const { jids } = parseInput(membersSchema, input);
  const group = await getContactGroup(ctx, groupId);
  const errors: AddMembersResult['errors'] = [];
  const wanted = new Map<string, string>();
  for (const raw of jids) {
    const jid = toJid(raw.trim());
    if (!jid) errors.push({ jid: raw, reason: 'invalid_jid' });
    else if (wanted.has(jid)) errors.push({ jid: raw, reason: 'duplicate' });
    else wanted.set(jid, raw);
  }
  // A contact is found by its number or its LID, as GET /contacts/{jid} finds it.
  const found = await contactIdsOf(ctx, [...wanted.keys()]);
  const contactIds = [...new Set(found.values())];
  // Members already there are the rows the insert skips, so a concurrent add of the same contact
  // reports already_member instead of failing on the primary key.
  const now = ctx.now();
  const inserted =
    contactIds.length > 0
      ? await ctx.db.$queryRaw<
          Array<{ contactId: string }>
        >`INSERT INTO "ContactGroupMember" ("groupId", "contactId", "addedAt") VALUES ${Prisma.join(
          contactIds.map((id) => Prisma.sql`(${group.id}, ${id}, ${now})`),
        )} ON CONFLICT DO NOTHING RETURNING "contactId"`
      : [];
  const added = new Set(inserted.map((r) => r.contactId));
  // The number and the LID of one person in one request: the second is a duplicate.
  const reported = new Set<string>();
  for (const [jid, raw] of wanted) {
    const contactId = found.get(jid);
    if (contactId === undefined) errors.push({ jid: raw, reason: 'contact_not_found' });
    else if (reported.has(contactId)) errors.push({ jid: raw, reason: 'duplicate' });
    else if (!added.has(contactId)) errors.push({ jid: raw, reason: 'already_member' });
    if (contactId !== undefined) reported.add(contactId);
  }
  return { ok: true, added: added.size, errors };
};

export const removeContactGroupMember = async (ctx: RequestContext, groupId: string, jidParam: string): Promise<{ ok: true }> => {
  const jid = jidFromPath(jidParam);
  const group = await getContactGroup(ctx, groupId);
  const contactId = (await contactIdsOf(ctx, [jid])).get(jid);
  const removed = contactId ? await ctx.db.contactGroupMember.deleteMany({ where: { groupId: group.id, contactId } }) : { count: 0 };
  if (removed.count === 0) throw notFound('Contact in this group');
  return { ok: true };
};

/** Deletes a contact group and its memberships; the contacts themselves stay in the address book. */
export const deleteContactGroup = async (ctx: RequestContext, groupId: string): Promise<{ ok: true }> => {
  const removed = await ctx.db.contactGroup.deleteMany({ where: { id: groupId, accountId: ctx.caller.accountId } });
  if (removed.count === 0) throw notFound('Contact group');
  return { ok: true };
};
