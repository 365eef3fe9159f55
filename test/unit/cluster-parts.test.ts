import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEventBus, parseEvent, serializeEvent } from '../../src/runtime/events.ts';
import { graphqlOperation, graphqlSessions } from '../../src/runtime/root/forward.ts';
import { idempotentMutations } from '../../src/runtime/root/graphql.ts';
import { honoursIdempotencyKey } from '../../src/rest/routes.ts';

describe('events across nodes', () => {
  it('bring Dates back as Dates, and leave ISO strings as strings', () => {
    const at = new Date('2026-11-27T03:00:00.123Z');
    const back = parseEvent(serializeEvent({ createdAt: at, lastSeen: null, at: '2026-11-27T03:00:00.000Z', nested: [{ when: at }] }));
    expect(back).toEqual({ createdAt: at, lastSeen: null, at: '2026-11-27T03:00:00.000Z', nested: [{ when: at }] });
    expect((back as { createdAt: unknown }).createdAt).toBeInstanceOf(Date);
  });

  it('reach a subscriber of another bus through Redis', async () => {
    const one = createEventBus('redis://127.0.0.1:6379');
    const other = createEventBus('redis://127.0.0.1:6379');
    try {
      const sessionId = randomUUID();
      const events = other.events.subscribe('presence', sessionId);
      const next = events[Symbol.asyncIterator]().next();
      // The subscription reaches Redis asynchronously; publish until it is heard.
      let heard = false;
      void next.then(() => {
        heard = true;
      });
      const payload = {
        sessionId,
        chatId: 'x@s.whatsapp.net',
        from: 'x@s.whatsapp.net',
        fromLid: null,
        presence: 'composing' as const,
        lastSeen: null,
        at: '2026-11-27T03:00:00.000Z',
      };
      for (let i = 0; i < 50 && !heard; i++) {
        one.events.publish('presence', sessionId, payload);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect((await next).value).toEqual(payload);
    } finally {
      await one.close();
      await other.close();
    }
  });
});

describe('which sessions a GraphQL operation is about (the hop to their owner)', () => {
  // Session ids are UUIDs (Prisma's uuid()); these stand for four sessions.
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => `0000000${n}-0000-4000-8000-000000000000`);

  it('reads sessionId arguments, given inline or as variables, and id on the session fields', () => {
    expect(graphqlSessions({ query: `mutation { sendText(sessionId: "${a}", to: "1", message: "m") { ok } }` })).toEqual(new Set([a]));
    expect(graphqlSessions({ query: 'mutation($s: ID!) { connectSession(id: $s) { id } }', variables: { s: b } })).toEqual(new Set([b]));
    expect(graphqlSessions({ query: `query { session(id: "${c}") { id } message(id: "m", sessionId: "${c}") { id } }` })).toEqual(
      new Set([c]),
    );
    expect(graphqlSessions({ query: `query { session(id: "${c}") { id } other: session(id: "${d}") { id } }` })).toEqual(new Set([c, d]));
  });

  it('takes only what can name a session: anything else (a NUL, a malformed id) is left to the resolver, which refuses it', () => {
    expect(graphqlSessions({ query: 'query { session(id: "a\\u0000b") { id } }' })).toEqual(new Set());
    expect(graphqlSessions({ query: 'query($s: ID!) { session(id: $s) { id } }', variables: { s: `${a}\u0000` } })).toEqual(new Set());
    expect(graphqlSessions({ query: 'mutation { sendText(sessionId: "%ZZ", to: "1", message: "m") { ok } }' })).toEqual(new Set());
  });

  it('finds none in an operation about no session (a webhook id is not a session id), and leaves subscriptions to the event bus', () => {
    expect(graphqlSessions({ query: `mutation { deleteWebhook(id: "${a}") }` })).toEqual(new Set());
    expect(graphqlSessions({ query: `subscription { incomingMessages(sessionId: "${a}") { content } }` })).toBeUndefined();
    expect(graphqlSessions({ query: 'not graphql' })).toBeUndefined();
  });

  it('picks the named operation of a document with several', () => {
    const query = `query A { session(id: "${a}") { id } } query B { session(id: "${b}") { id } }`;
    expect(graphqlSessions({ query, operationName: 'B' })).toEqual(new Set([b]));
  });
});

describe('what a node sends again to the next owner when the owner died before answering', () => {
  it('REST: the routes that honour Idempotency-Key, by method and path, and nothing else', () => {
    expect(honoursIdempotencyKey('POST', '/sessions/abc/send')).toBe(true);
    expect(honoursIdempotencyKey('POST', '/sessions/abc/send-media')).toBe(true);
    expect(honoursIdempotencyKey('POST', '/sessions/api/send')).toBe(true);
    expect(honoursIdempotencyKey('POST', '/whatsapp/send')).toBe(true);
    expect(honoursIdempotencyKey('GET', '/sessions/abc/send')).toBe(false);
    expect(honoursIdempotencyKey('POST', '/sessions/abc/connect')).toBe(false);
    expect(honoursIdempotencyKey('POST', '/sessions/abc/groups')).toBe(false);
    expect(honoursIdempotencyKey('POST', '/sessions/abc/send/extra')).toBe(false);
  });

  it('GraphQL: the mutations that take an idempotencyKey, read from the schema; the operation says its kind and fields', () => {
    const S = randomUUID();
    const mutations = idempotentMutations();
    expect([...mutations]).toEqual(expect.arrayContaining(['sendText', 'sendMedia', 'sendPoll', 'bulkSendToTag']));
    expect(mutations.has('createGroup')).toBe(false);
    expect(mutations.has('connectSession')).toBe(false);
    expect(
      graphqlOperation({
        query: `mutation { a: sendText(sessionId: "${S}", to: "1", message: "m") { ok } connectSession(id: "${S}") { id } }`,
      }),
    ).toEqual({
      kind: 'mutation',
      fields: ['sendText', 'connectSession'],
      sessions: new Set([S]),
    });
  });
});
