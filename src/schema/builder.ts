import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import { JSONObjectResolver } from 'graphql-scalars';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type { RequestContext } from '../resolvers/context.ts';
import { isProduction } from '../runtime/settings.ts';

export type GraphQLContext = RequestContext;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  Scalars: {
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [PrismaPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: isProduction() ? null : 'error',
  },
});

builder.addScalarType('JSONObject', JSONObjectResolver);
builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

/** GraphQL sends explicit nulls for absent optional inputs; the resolvers' rules expect them left out. */
export const withoutNulls = <T extends object>(input: T): { [K in keyof T]: Exclude<T[K], null> } =>
  Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], null>;
  };

export type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
export type InputFields = PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>;
