import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import type { ZodOpenApiOperationObject, ZodOpenApiParameters, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { errorAnswer } from './answers.ts';
import { schemaOf, statusesOf } from './route.ts';
import type { Route, SchemaSettings } from './route.ts';
import { routeGroups } from './routes.ts';

/**
 * The OpenAPI 3.1 document of /v1, built from the route declarations Express mounts: request bodies and
 * query parameters are the zod schemas the resolvers parse with (as clients send them, before transforms;
 * refinements JSON Schema cannot express are left to the 400 answers), answers the routes' answer schemas.
 * zod-openapi moves every schema named with `.meta({ id })` to components.
 */

const idempotencyKey = z.object({
  'Idempotency-Key': z
    .string()
    .optional()
    .meta({ param: { description: 'a retry with the same key returns the first answer and sends nothing twice' } }),
});

const error = { description: 'An error', content: { 'application/json': { schema: errorAnswer } } };

const file = {
  description: 'The file',
  content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
} as const;

/** How the reference lists the domains (routes are declared in the order Express must try them); others follow. */
const tagOrder = [
  'Accounts',
  'Sessions',
  'Messages',
  'Conversations',
  'Scheduling',
  'Bulk',
  'Contacts',
  'Contact groups',
  'Groups',
  'Statuses',
  'Webhooks',
  'Channels',
];
const rank = (tag: string): number => (tagOrder.includes(tag) ? tagOrder.indexOf(tag) : tagOrder.length);

const paramNames = (path: string): string[] => [...path.matchAll(/:(\w+)/g)].map((match) => match[1] ?? '');

const operation = (route: Route, settings: SchemaSettings): ZodOpenApiOperationObject => {
  const params = paramNames(route.path);
  const requestParams: ZodOpenApiParameters = {
    ...(params.length > 0 ? { path: z.object(Object.fromEntries(params.map((name) => [name, z.string()]))) } : {}),
    ...(route.query ? { query: schemaOf(route.query, settings) } : {}),
    ...(route.idempotent ? { header: idempotencyKey } : {}),
  };
  const success = 'file' in route ? file : { description: 'Success', content: { 'application/json': { schema: route.response } } };
  const responses: ZodOpenApiResponsesObject = {};
  for (const status of statusesOf(route)) responses[`${status}`] = success;
  responses['4XX'] = error;
  responses['5XX'] = error;
  return {
    operationId: `${route.method}${route.path.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: route.summary,
    tags: [route.tag],
    ...(Object.keys(requestParams).length > 0 ? { requestParams } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body, settings) } } } } : {}),
    responses,
  };
};

export const openApiDocument = (settings: SchemaSettings): ReturnType<typeof createDocument> => {
  const routes = routeGroups.flat();
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method]: operation(route, settings) };
  }
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Multi-session WhatsApp messaging API',
        version: '1',
        description:
          "The REST interface of the messaging API v1 (docs/api-reference.md), with this service's extensions. Every route needs the x-api-key header. Errors: `{ok: false, error: {code, message, details?}}`.",
      },
      servers: [{ url: '/v1' }],
      security: [{ apiKey: [] }],
      tags: [...new Set(routes.map((route) => route.tag))].sort((a, b) => rank(a) - rank(b)).map((name) => ({ name })),
      paths,
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
    },
    {
      // `format: date-time` says what zod's long date-time pattern says.
      override: ({ jsonSchema }) => {
        if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
      },
    },
  );
};
