import { PrismaLibSql } from '@prisma/adapter-libsql';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaClient as PostgresClient } from '../src/generated/postgres/client.ts';
import { PrismaClient as SqliteClient } from '../src/generated/sqlite/client.ts';
import type { Db } from '../src/runtime/db/client.ts';
import { providerOf } from '../src/runtime/db/client.ts';
import type { TestApp } from './helpers/app.ts';
import { dbKinds, gql, http, startTestApp } from './helpers/app.ts';

/** Every SQL statement the driver adapter runs, inside transactions too: what the database really sees. */
const counting = <T extends object>(target: T, statements: string[]): T =>
  new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'queryRaw' || property === 'executeRaw') {
        return (query: { sql: string }, ...rest: unknown[]) => {
          statements.push(query.sql);
          return value.call(object, query, ...rest);
        };
      }
      if (property === 'startTransaction' || property === 'connect') {
        return async (...args: unknown[]) => counting(await value.apply(object, args), statements);
      }
      return value.bind(object);
    },
  });

const countingDb =
  (statements: string[]) =>
  (url: string): Db => {
    if (providerOf(url) === 'sqlite') {
      return new SqliteClient({ adapter: counting<SqlDriverAdapterFactory>(new PrismaLibSql({ url }), statements) });
    }
    return new PostgresClient({
      adapter: counting<SqlDriverAdapterFactory>(new PrismaPg({ connectionString: url }), statements),
    }) as unknown as Db;
  };

const SESSIONS = 50;
const MESSAGES_EACH = 25;

describe.each(dbKinds)('GraphQL as a graph (%s)', (kind) => {
  let app: TestApp;
  let key: string;
  let accountId: string;
  const statements: string[] = [];
  const ask = (query: string, variables?: Record<string, unknown>) => gql(app.baseUrl, key, query, variables);

  beforeAll(async () => {
    // Pages far larger than the cost limit lets one operation ask for: what is measured here is the SQL
    // they take (the limit has its own tests, in hardening.test.ts).
    app = await startTestApp(kind, { GRAPHQL_MAX_COMPLEXITY: 1_000_000 }, {}, { makeDb: countingDb(statements) });
    const account = await app.newAccount();
    key = account.apiKey;
    accountId = account.id;
    const base = Date.UTC(2026, 0, 1);
    const sessions = Array.from({ length: SESSIONS }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      accountId,
      sessionName: `s${i}`,
      createdAt: new Date(base + i * 1000),
    }));
    await app.db.session.createMany({ data: sessions });
    await app.db.outgoingMessage.createMany({
      data: sessions.flatMap((s, i) =>
        Array.from({ length: MESSAGES_EACH }, (_, m) => ({
          accountId,
          sessionId: s.id,
          toNumber: `1555000${String(i).padStart(4, '0')}@s.whatsapp.net`,
          content: `${s.sessionName} m${m}`,
          status: m % 5 === 0 ? 'FAILED' : 'SENT',
          createdAt: new Date(base + i * 1000 + m),
        })),
      ),
    });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  const sessionsWithMessages = `query($sessions: Int!, $messages: Int!) {
    sessions(first: $sessions) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id sessionName status createdAt
        messages(first: $messages) { pageInfo { hasNextPage } edges { cursor node { content status createdAt } } } } }
    }
  }`;

  /**
   * The statements one query runs on the tables it reads: the key's lookup (cached for a few seconds) and
   * the background loops (webhook delivery, jobs) come and go on their own.
   */
  const onTables = (tables: string[]) => (sql: string) => tables.some((table) => new RegExp(`[\`"]${table}[\`"]`).test(sql));
  const statementsOf = async (query: string, variables?: Record<string, unknown>) => {
    statements.length = 0;
    const res = await ask(query, variables);
    expect(res.errors).toBeUndefined();
    return { res, count: statements.filter(onTables(['Session', 'OutgoingMessage'])).length };
  };

  it('loads 50 sessions with their last 20 messages each in a bounded number of SQL statements, whatever the page sizes', async () => {
    const { res, count } = await statementsOf(sessionsWithMessages, { sessions: 50, messages: 20 });
    const page = res.data.sessions;
    expect(page.totalCount).toBe(SESSIONS);
    expect(page.pageInfo.hasNextPage).toBe(false);
    expect(page.edges).toHaveLength(SESSIONS);
    const first = page.edges[0].node;
    expect(first.sessionName).toBe('s0');
    expect(first.status).toBe('DISCONNECTED');
    expect(first.createdAt).toBe('2026-01-01T00:00:00.000Z');
    expect(first.messages.edges).toHaveLength(20);
    // Newest first, as GET /messages lists them.
    expect(first.messages.edges.map((e: { node: { content: string } }) => e.node.content).slice(0, 2)).toEqual(['s0 m24', 's0 m23']);
    expect(first.messages.pageInfo.hasNextPage).toBe(true);
    for (const edge of page.edges) expect(edge.node.messages.edges).toHaveLength(20);

    const small = await statementsOf(sessionsWithMessages, { sessions: 5, messages: 2 });
    expect(small.res.data.sessions.edges).toHaveLength(5);
    // One for the sessions, one for all their messages, one for the total: not one per session.
    expect(count).toBe(3);
    expect(small.count).toBe(count);
  });

  it("loads the messages' poll tallies with them: one statement more for all their votes, whatever the page sizes", async () => {
    const withPolls = sessionsWithMessages.replace('content status createdAt', 'content status createdAt poll { totalVoters }');
    const countOf = async (variables: Record<string, unknown>) => {
      statements.length = 0;
      const res = await ask(withPolls, variables);
      expect(res.errors).toBeUndefined();
      expect(res.data.sessions.edges[0].node.messages.edges[0].node.poll).toBeNull();
      return statements.filter(onTables(['Session', 'OutgoingMessage', 'PollVote'])).length;
    };
    // 400 messages: SQLite refuses a relation read over more ids than its parameter limit (receipts too).
    expect(await countOf({ sessions: 20, messages: 20 })).toBe(4);
    expect(await countOf({ sessions: 5, messages: 2 })).toBe(4);
  });

  it('pages a session’s messages with cursors, filtered by status and recipient as REST filters them', async () => {
    const id = '00000000-0000-4000-8000-000000000003';
    const query = `query($id: ID!, $after: String) { session(id: $id) {
      messages(first: 3, after: $after, status: FAILED) { totalCount pageInfo { hasNextPage endCursor } edges { node { content status } } } } }`;
    const one = await ask(query, { id });
    expect(one.data.session.messages.edges.map((e: { node: { content: string } }) => e.node.content)).toEqual([
      's3 m20',
      's3 m15',
      's3 m10',
    ]);
    // The total counts what the filters match, whatever the page.
    expect(one.data.session.messages.totalCount).toBe(5);
    const two = await ask(query, { id, after: one.data.session.messages.pageInfo.endCursor });
    expect(two.data.session.messages).toEqual({
      totalCount: 5,
      pageInfo: { hasNextPage: false, endCursor: expect.any(String) },
      edges: [{ node: { content: 's3 m5', status: 'FAILED' } }, { node: { content: 's3 m0', status: 'FAILED' } }],
    });
    const to = await ask(`query($id: ID!) { session(id: $id) { messages(to: "15550000003", first: 1) { edges { node { content } } } } }`, {
      id,
    });
    expect(to.data.session.messages.edges).toEqual([{ node: { content: 's3 m24' } }]);
    const other = await ask(
      `query($id: ID!) { session(id: $id) { messages(to: "15550000004") { totalCount edges { node { content } } } } }`,
      {
        id,
      },
    );
    expect(other.data.session.messages).toEqual({ totalCount: 0, edges: [] });
    const all = await ask(`query($id: ID!) { session(id: $id) { messages(first: 1) { totalCount } } }`, { id });
    expect(all.data.session.messages.totalCount).toBe(MESSAGES_EACH);
  });

  it('refuses bad filters and page arguments with VALIDATION_FAILED, and another account’s session with NOT_FOUND', async () => {
    const id = '00000000-0000-4000-8000-000000000003';
    const badTo = await ask(`query($id: ID!) { session(id: $id) { messages(to: "not a number") { edges { cursor } } } }`, { id });
    expect(badTo.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'to' }] });
    const badStatus = await ask(`query($id: ID!) { session(id: $id) { messages(status: LOST) { edges { cursor } } } }`, { id });
    expect(badStatus.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    const negative = await ask('{ sessions(first: -1) { edges { cursor } } }');
    expect(negative.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    for (const after of [
      'not a cursor',
      Buffer.from('OffsetConnection:-5').toString('base64'),
      Buffer.from('OffsetConnection:x').toString('base64'),
    ]) {
      for (const field of ['contacts', 'sessions', 'contactGroups']) {
        const made = await ask(`query($a: String) { ${field}(after: $a) { totalCount } }`, { a: after });
        expect(made.errors?.[0]?.extensions?.code, `${field} ${after}`).toBe('VALIDATION_FAILED');
      }
    }
    const other = await app.newAccount();
    const foreign = await gql(app.baseUrl, other.apiKey, `query($id: ID!) { session(id: $id) { id } }`, { id });
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await gql(app.baseUrl, other.apiKey, '{ sessions { totalCount } me { sessions { totalCount } } }')).data).toEqual({
      sessions: { totalCount: 0 },
      me: { sessions: { totalCount: 0 } },
    });
  });

  it('follows contacts to their groups and groups to their members, with totals', async () => {
    for (const n of [1, 2, 3]) {
      const made = await http(app.baseUrl, 'POST', '/v1/contacts', {
        key,
        body: { phone: `1555777000${n}`, name: `C${n}`, tags: ['graph'] },
      });
      expect(made.status).toBe(201);
    }
    const group = await ask('mutation { createContactGroup(name: "Graph friends", color: "#abc") { id name contactCount createdAt } }');
    const groupId = group.data.createContactGroup.id;
    expect(group.data.createContactGroup).toMatchObject({ name: 'Graph friends', contactCount: 0 });
    expect(new Date(group.data.createContactGroup.createdAt).toISOString()).toBe(group.data.createContactGroup.createdAt);
    await ask(`mutation($g: ID!) { addContactGroupMembers(groupId: $g, jids: ["15557770001", "15557770002"]) { added } }`, { g: groupId });

    statements.length = 0;
    const res = await ask(
      `query($g: ID!) {
      contactGroup(id: $g) { name contactCount members(first: 1) { totalCount pageInfo { hasNextPage } edges { node { name } } } }
      contacts(tag: "graph", first: 10) { totalCount edges { node { name groups { totalCount edges { node { name } } } } } }
      contactGroups { totalCount edges { node { name members { totalCount } } } }
    }`,
      { g: groupId },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.contactGroup).toEqual({
      name: 'Graph friends',
      contactCount: 2,
      members: { totalCount: 2, pageInfo: { hasNextPage: true }, edges: [{ node: { name: expect.stringMatching(/^C[12]$/) } }] },
    });
    expect(res.data.contacts).toEqual({
      totalCount: 3,
      edges: [
        { node: { name: 'C1', groups: { totalCount: 1, edges: [{ node: { name: 'Graph friends' } }] } } },
        { node: { name: 'C2', groups: { totalCount: 1, edges: [{ node: { name: 'Graph friends' } }] } } },
        { node: { name: 'C3', groups: { totalCount: 0, edges: [] } } },
      ],
    });
    expect(res.data.contactGroups).toEqual({ totalCount: 1, edges: [{ node: { name: 'Graph friends', members: { totalCount: 2 } } }] });
    // Nested lists are loaded per level, not per parent row.
    expect(statements.filter(onTables(['Contact', 'ContactGroup', 'ContactGroupMember', 'ContactTag'])).length).toBeLessThanOrEqual(12);

    const search = await ask('{ contacts(search: "c2") { totalCount edges { node { name } } } }');
    expect(search.data.contacts).toEqual({ totalCount: 1, edges: [{ node: { name: 'C2' } }] });
    const paged = await ask(
      '{ contacts(tag: "graph", first: 2, after: null) { pageInfo { hasNextPage endCursor } edges { node { name } } } }',
    );
    expect(paged.data.contacts.pageInfo.hasNextPage).toBe(true);
    const rest = await ask(`query($a: String) { contacts(tag: "graph", first: 2, after: $a) { edges { node { name } } } }`, {
      a: paged.data.contacts.pageInfo.endCursor,
    });
    expect(rest.data.contacts.edges).toEqual([{ node: { name: 'C3' } }]);
  });

  it('answers the account with its sessions, and DateTime values in ISO 8601 with milliseconds', async () => {
    const res = await ask('{ me { id createdAt sessions(first: 2) { totalCount edges { node { sessionName lastSeen updatedAt } } } } }');
    expect(res.data.me.id).toBe(accountId);
    expect(res.data.me.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.data.me.sessions.totalCount).toBe(SESSIONS);
    expect(res.data.me.sessions.edges.map((e: { node: { sessionName: string } }) => e.node.sessionName)).toEqual(['s0', 's1']);
    expect(res.data.me.sessions.edges[0].node.lastSeen).toBeNull();
    // A session that is not connected answers null for its network groups, with the error; the list stays.
    const groups = await ask('{ sessions(first: 2) { edges { node { sessionName groupsCount } } } }');
    expect(groups.data.sessions.edges).toEqual([
      { node: { sessionName: 's0', groupsCount: null } },
      { node: { sessionName: 's1', groupsCount: null } },
    ]);
    expect(groups.errors?.map((e) => e.extensions?.code)).toEqual(['SESSION_NOT_CONNECTED', 'SESSION_NOT_CONNECTED']);
  });
});
