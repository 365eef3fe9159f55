import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import { DateTimeResolver, JSONObjectResolver } from 'graphql-scalars';
import type { GraphQLResolveInfo } from 'graphql';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type { RequestContext } from '../resolvers/context.ts';
import { sendOnce } from '../resolvers/idempotency.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../resolvers/paging.ts';
import { isProduction } from '../runtime/settings.ts';

export type GraphQLContext = RequestContext;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  Scalars: {
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    DateTime: { Input: Date; Output: Date };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  plugins: [RelayPlugin, PrismaPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Ids are the same UUIDs REST uses, so objects are reached by their own queries, not a global `node`.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
  },
  prisma: {
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: isProduction() ? null : 'error',
    // As REST's `limit`: a page larger than the maximum is lowered to it.
    maxConnectionSize: MAX_LIMIT,
    defaultConnectionSize: DEFAULT_LIMIT,
  },
});

builder.addScalarType('JSONObject', JSONObjectResolver);
builder.addScalarType('DateTime', DateTimeResolver);
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

/** Views that carry ISO strings (REST's shape) give GraphQL's DateTime a Date. */
export const dateOf = (iso: string): Date => new Date(iso);
export const dateOrNull = (iso: string | null): Date | null => (iso === null ? null : new Date(iso));

/**
 * A send mutation's body, run once per idempotency key (the `idempotencyKey` argument or the request's
 * Idempotency-Key header; see sendOnce): a retry gets the first answer and sends nothing twice.
 */
export const once = <A extends { idempotencyKey?: string | null }, T>(
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  { idempotencyKey, ...args }: A,
  send: (ctx: GraphQLContext, args: Omit<A, 'idempotencyKey'>) => Promise<T>,
): Promise<T> =>
  sendOnce(
    ctx,
    { key: idempotencyKey, operation: { field: info.fieldName, responseKey: String(info.path.key) } },
    withoutNulls(args),
    (gated) => send(gated, args),
  );
