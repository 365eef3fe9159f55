import { createRequire } from 'node:module';
import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import { formatDocument, stringifyDocument } from 'urql';
import { describe, expect, it } from 'vitest';
import { PAGE_SIZES } from '../../dashboard/src/page-sizes.ts';
import * as generated from '../../dashboard/src/generated/graphql.ts';
import { MAX_LIMIT } from '../../src/resolvers/paging.ts';
import type { OperationLimit } from '../../src/runtime/root/graphql.ts';
import { costOf, limitRules } from '../../src/runtime/root/graphql.ts';
import { defaultSettings } from '../../src/runtime/settings.ts';
import { schema } from '../../src/schema/index.ts';

// Pothos builds the schema with graphql's CommonJS build, whose validate refuses a schema of the ESM copy.
const { Kind, Lexer, Source, TokenKind, parse, validate, visit } = createRequire(import.meta.url)('graphql') as typeof import('graphql');

const settings = defaultSettings();

const LIMITS: Record<OperationLimit | 'tokens', number> = {
  depth: settings.GRAPHQL_MAX_DEPTH,
  aliases: settings.GRAPHQL_MAX_ALIASES,
  directives: settings.GRAPHQL_MAX_DIRECTIVES,
  cost: settings.GRAPHQL_MAX_COMPLEXITY,
  breadth: settings.GRAPHQL_MAX_BREADTH,
  tokens: settings.GRAPHQL_MAX_TOKENS,
};

const isDocument = (value: unknown): value is DocumentNode =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === Kind.DOCUMENT;

/**
 * Every operation the dashboard sends, as the text urql sends: the typed documents codegen made from
 * dashboard/src, with urql's cache adding `__typename` to every selection, which costs as any field.
 */
const operations = Object.values(generated)
  .filter(isDocument)
  .flatMap((document) =>
    document.definitions
      .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
      .map((operation) => ({ name: operation.name?.value ?? '(anonymous)', query: stringifyDocument(formatDocument(document)) })),
  );

/** Tokens as max-tokens counts them while parsing: every lexer token but the end mark. */
const tokensOf = (query: string): number => {
  const lexer = new Lexer(new Source(query));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count += 1;
  return count;
};

/** The variables an operation passes as a page size (`first`/`last`). */
const pageVariables = (query: string): string[] => {
  const names: string[] = [];
  visit(parse(query), {
    Argument: (argument) => {
      if ((argument.name.value === 'first' || argument.name.value === 'last') && argument.value.kind === Kind.VARIABLE) {
        names.push(argument.value.name.value);
      }
    },
  });
  return names;
};

/** Every page size the dashboard passes, by operation (dashboard/src/page-sizes.ts); "Show more" stops at messagesShown. */
const SENT_PAGE_SIZES: Record<string, number[]> = {
  Messages: [PAGE_SIZES.messages, PAGE_SIZES.messagesShown, PAGE_SIZES.pending],
  Contacts: [PAGE_SIZES.contacts],
  SendQueue: [PAGE_SIZES.queue],
  Chats: [PAGE_SIZES.chats],
  Thread: [PAGE_SIZES.thread],
  SearchMessages: [PAGE_SIZES.search],
};

/**
 * What the service measures for an operation, with the rules and options it validates with, and its
 * cost as it is measured before it runs: with its page sizes set to `pageSize` when it passes them.
 */
const measure = (query: string, pageSize?: number) => {
  const document = parse(query);
  const found: Partial<Record<OperationLimit | 'tokens', number>> = { tokens: tokensOf(query) };
  const errors = validate(
    schema,
    document,
    limitRules(settings, (limit, n) => {
      found[limit] = n;
    }),
  ).map((e) => e.message);
  // As in the service: an operation refused when validated is not measured again.
  if (errors.length > 0) return { found, errors };
  const variableValues = Object.fromEntries(pageVariables(query).map((name) => [name, pageSize]));
  const cost = costOf(settings, { schema, document, variableValues });
  if (cost?.refusal) errors.push(cost.refusal.message);
  else found.cost = cost?.cost;
  return { found, errors };
};

describe("the dashboard's operations against the GraphQL limits", () => {
  it('finds the operations', () => {
    expect(operations.map((o) => o.name)).toEqual(expect.arrayContaining(['ContactGroups', 'ContactGroupMembers', 'Sessions', 'Messages']));
  });

  it.each(operations)('$name stays within half of every limit with default settings, at every page size it sends', ({ name, query }) => {
    const sizes = pageVariables(query).length > 0 ? SENT_PAGE_SIZES[name] : [undefined];
    expect(sizes, `${name} passes a page size: list the ones it sends in SENT_PAGE_SIZES`).toBeDefined();
    for (const size of sizes ?? []) {
      const { found, errors } = measure(query, size);
      expect(errors).toEqual([]);
      for (const [limit, max] of Object.entries(LIMITS)) {
        const value = found[limit as OperationLimit | 'tokens'];
        expect(value, `${limit} not measured`).toBeTypeOf('number');
        expect(value, `${limit} at page size ${size}: ${value} of ${max}`).toBeLessThanOrEqual(max / 2);
      }
    }
  });

  /**
   * The inbox's pages: always their one size (PAGE_SIZES.chats, .thread; further pages follow the
   * cursor, never a larger first), and nested deep enough (session → chats/chat → messages → edges →
   * node, each level weighing 1.5x) that a page of MAX_LIMIT would be over the limit whatever few
   * fields they kept. The test above holds them to half the limit at the size they send.
   */
  const CURSOR_PAGED = new Set(['Chats', 'Thread']);

  it.each(operations.filter((o) => pageVariables(o.query).length > 0 && !CURSOR_PAGED.has(o.name)))(
    '$name is not refused even at the largest page the service serves',
    ({ query }) => {
      const { found, errors } = measure(query, MAX_LIMIT);
      expect(errors).toEqual([]);
      expect(found.cost).toBeLessThanOrEqual(LIMITS.cost);
    },
  );

  it("measures as the service does: the contact-groups query the dashboard used to send is refused with the issue's figure", () => {
    const before = stringifyDocument(
      formatDocument(
        parse(`
          query ContactGroups {
            contactGroups(first: 100) {
              edges { node { id name description contactCount members(first: 50) { totalCount edges { node { id jid name } } } } }
            }
          }
        `),
      ),
    );
    expect(measure(before).errors).toEqual(['Query Cost limit of 20000 exceeded, found 479731.25.']);
    // The same page sizes passed in variables cost the same: the validation rule sees none of them, the
    // check before the operation runs sees both.
    const passed = `query ContactGroups($groups: Int, $members: Int) {
      contactGroups(first: $groups) {
        edges { node { id name description contactCount members(first: $members) { totalCount edges { node { id jid name } } } } }
      }
    }`;
    const document = parse(stringifyDocument(formatDocument(parse(passed))));
    expect(validate(schema, document, limitRules(settings))).toEqual([]);
    expect(costOf(settings, { schema, document, variableValues: { groups: 100, members: 50 } })?.refusal?.message).toBe(
      'Query Cost limit of 20000 exceeded, found 479731.25.',
    );
  });
});
