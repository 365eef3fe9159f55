import { createRequire } from 'node:module';
import type { GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';

// The schema's own copy of graphql (CommonJS, as Pothos loads it), so its type checks recognise the types.
const { isObjectType, getNamedType } = createRequire(import.meta.url)('graphql') as typeof import('graphql');

/** Relay connections: the object types with edges and pageInfo. */
const connections = Object.values(schema.getTypeMap()).filter(
  (type): type is GraphQLObjectType =>
    isObjectType(type) && !type.name.startsWith('__') && 'edges' in type.getFields() && 'pageInfo' in type.getFields(),
);

describe('one graph convention', () => {
  it('finds the connections', () => {
    expect(connections.map((c) => c.name)).toEqual(expect.arrayContaining(['SessionMessagesConnection', 'QueryContactsConnection']));
  });

  it.each(connections.map((c) => [c.name, c] as const))('%s has totalCount: Int!', (_name, connection) => {
    const field = connection.getFields().totalCount;
    expect(field, 'totalCount').toBeDefined();
    expect(String(field?.type)).toBe('Int!');
    expect(getNamedType(field?.type)?.name).toBe('Int');
  });
});
