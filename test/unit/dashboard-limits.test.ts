import { createRequire } from 'node:module';
import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import { formatDocument, stringifyDocument } from 'urql';
import { describe, expect, it } from 'vitest';
import * as generated from '../../dashboard/src/generated/graphql.ts';
import type { OperationLimit } from '../../src/runtime/root/graphql.ts';
import { limitRules } from '../../src/runtime/root/graphql.ts';
import { defaultSettings } from '../../src/runtime/settings.ts';
import { schema } from '../../src/schema/index.ts';

// Pothos builds the schema with graphql's CommonJS build, whose validate refuses a schema of the ESM copy.
const { Kind, Lexer, Source, TokenKind, parse, validate } = createRequire(import.meta.url)('graphql') as typeof import('graphql');

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

/** What the service measures for an operation, with the rules and options it validates with. */
const measure = (query: string) => {
  const found: Partial<Record<OperationLimit | 'tokens', number>> = { tokens: tokensOf(query) };
  const errors = validate(
    schema,
    parse(query),
    limitRules(settings, (limit, n) => {
      found[limit] = n;
    }),
  );
  return { found, errors: errors.map((e) => e.message) };
};

describe("the dashboard's operations against the GraphQL limits", () => {
  it('finds the operations', () => {
    expect(operations.map((o) => o.name)).toEqual(expect.arrayContaining(['ContactGroups', 'ContactGroupMembers', 'Sessions', 'Messages']));
  });

  it.each(operations)('$name stays within half of every limit with default settings', ({ query }) => {
    const { found, errors } = measure(query);
    expect(errors).toEqual([]);
    for (const [limit, max] of Object.entries(LIMITS)) {
      const value = found[limit as OperationLimit | 'tokens'];
      expect(value, `${limit} not measured`).toBeTypeOf('number');
      expect(value, `${limit}: ${value} of ${max}`).toBeLessThanOrEqual(max / 2);
    }
  });

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
  });
});
