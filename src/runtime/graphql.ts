import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError, visit } from 'graphql';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga } from 'graphql-yoga';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { authenticate } from '../resolvers/accounts.ts';
import type { Caller, Deps, RequestContext } from '../resolvers/context.ts';
import { DomainError, validationFailed } from '../resolvers/errors.ts';
import type { ErrorDetail } from '../resolvers/errors.ts';
import { NUL_MESSAGE, nulDetails } from '../resolvers/validate.ts';
import { STATUS_OF } from '../rest/errors.ts';
import { schema } from '../schema/index.ts';

interface ServerContext {
  req?: IncomingMessage & { id?: unknown };
  connectionParams?: Record<string, unknown>;
}

const keyFrom = (sc: ServerContext): string | undefined => {
  const fromParams = sc.connectionParams?.['x-api-key'];
  if (typeof fromParams === 'string') return fromParams;
  const header = sc.req?.headers['x-api-key'];
  return typeof header === 'string' ? header : undefined;
};

const isGraphQLError = (value: unknown): value is GraphQLError =>
  typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'GraphQLError';

const domainToGraphQL = (error: DomainError, from?: GraphQLError): GraphQLError =>
  new GraphQLError(error.message, {
    nodes: from?.nodes,
    path: from?.path,
    source: from?.source,
    positions: from?.positions,
    extensions: {
      code: error.code,
      ...(error.details ? { details: error.details } : {}),
      // Only a refused key changes the HTTP status; field errors stay 200 as GraphQL clients expect.
      ...(error.code === 'UNAUTHENTICATED' ? { http: { status: STATUS_OF[error.code] } } : {}),
    },
  });

const GRAPHQL_REFUSALS = new Set<unknown>(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED']);

/**
 * GraphQL's own refusal of a request (syntax, validation, variable values, operation choice). Resolver
 * errors carry a path and yoga's HTTP-level ones a code of their own, so neither is taken for one.
 */
const isRefusal = (error: GraphQLError): boolean => {
  const code = error.extensions?.code;
  if (GRAPHQL_REFUSALS.has(code)) return true;
  if (error.path !== undefined || code !== undefined) return false;
  const cause = error.originalError;
  // graphql-tools keeps a scalar's own refusal of a variable value as the cause.
  return cause === undefined || (isGraphQLError(cause) && cause.originalError === undefined);
};

/**
 * decisions.md: GraphQL errors carry its codes, so a refusal is VALIDATION_FAILED, with details as on
 * REST. Changed in place: a new error could come from the other copy of graphql, which yoga would not
 * know as a GraphQLError and would wrap, losing the locations and sending `http`.
 */
const markRefusal = (error: GraphQLError): GraphQLError => {
  const extensions = error.extensions;
  extensions.code = 'VALIDATION_FAILED';
  extensions.details = [{ path: error.message.startsWith('Variable "$') ? 'variables' : 'query', message: error.message }];
  // The status yoga gives its own refusals; yoga leaves `http` out of what it sends.
  extensions.http ??= { spec: true, status: 400 };
  return error;
};

/**
 * Yoga's refusals of the HTTP request itself (BAD_REQUEST) in decisions.md's codes: a body that is not
 * JSON is INVALID_JSON, anything else about the request (no query, a query that is not a string) is
 * VALIDATION_FAILED. Changed in place, as markRefusal is, and without the JSON parser's own message.
 */
const markBadRequest = (error: GraphQLError): GraphQLError => {
  const extensions = error.extensions;
  if (/invalid JSON/i.test(error.message)) {
    extensions.code = 'INVALID_JSON';
    delete extensions.originalError;
  } else {
    extensions.code = 'VALIDATION_FAILED';
    extensions.details = [{ path: '(request)', message: error.message }];
  }
  extensions.http = { status: 400 };
  return error;
};

/** Validation errors are returned by yoga without passing through maskError, so they are marked here. */
const useRefusalCodes: Plugin = {
  onValidate: () => ({ result, setResult }) => {
    setResult(result.map((error) => (isRefusal(error) ? markRefusal(error) : error)));
  },
};

/** NUL in any string argument, literal or variable, named by argument or by variable path. */
const nulInRequest = (args: ExecutionArgs): ErrorDetail[] => {
  const details = nulDetails(args.variableValues ?? {}, ['variables']);
  visit(args.document, {
    Argument: (argument) => {
      let found = false;
      visit(argument.value, {
        StringValue: (node) => {
          found ||= node.value.includes('\u0000');
        },
      });
      if (found) details.push({ path: argument.name.value, message: NUL_MESSAGE });
    },
  });
  return details;
};

/**
 * IDs and other plain arguments reach the database without parseInput, and PostgreSQL fails on NUL, so
 * the whole request is checked once, as REST checks its path and query.
 */
const refuseNul = ({ args, setResultAndStopExecution }: { args: ExecutionArgs; setResultAndStopExecution: (result: ExecutionResult) => void }) => {
  const details = nulInRequest(args);
  if (details.length === 0) return;
  const { message } = validationFailed(details);
  // With data present yoga keeps the 200 of other field-level refusals.
  setResultAndStopExecution({ data: null, errors: [new GraphQLError(message, { extensions: { code: 'VALIDATION_FAILED', details } })] });
};

const useNulCheck: Plugin = { onExecute: refuseNul, onSubscribe: refuseNul };

/**
 * decisions.md: the key comes before anything else, so a request without one is a 401 even if its query
 * is invalid. The caller found is handed to the context of the same request instead of being looked up twice.
 */
const useKeyFirst = (deps: Deps, callers: WeakMap<Request, Caller>): Plugin<Record<string, unknown>, ServerContext> => ({
  onParams: async ({ context, request }) => {
    callers.set(request, await authenticate(deps, keyFrom(context)));
  },
});

export const createGraphQL = (deps: Deps): YogaServerInstance<ServerContext, RequestContext> => {
  const callers = new WeakMap<Request, Caller>();
  return createYoga<ServerContext, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    graphiql: { subscriptionsProtocol: 'WS', title: 'Messaging API' },
    landingPage: false,
    plugins: [useKeyFirst(deps, callers), useRefusalCodes, useNulCheck],
    context: async (sc): Promise<RequestContext> => {
      const caller = callers.get(sc.request) ?? (await authenticate(deps, keyFrom(sc)));
      const requestId = sc.req?.id === undefined ? crypto.randomUUID() : String(sc.req.id);
      return { ...deps, caller, requestId, logger: deps.logger.child({ requestId }) };
    },
    maskedErrors: {
      maskError: (error) => {
        // Duck-typed: graphql can be loaded twice (ESM and CJS builds), and then instanceof lies.
        const graphQLError = isGraphQLError(error) ? error : undefined;
        const original = graphQLError?.originalError ?? error;
        if (original instanceof DomainError) return domainToGraphQL(original, graphQLError);
        if (graphQLError && isRefusal(graphQLError)) return markRefusal(graphQLError);
        if (graphQLError?.extensions.code === 'BAD_REQUEST') return markBadRequest(graphQLError);
        // Yoga's other HTTP-level errors carry no original error and are safe to show as they are.
        if (graphQLError && !graphQLError.originalError) return graphQLError;
        deps.logger.error({ err: original }, 'unhandled GraphQL error');
        return new GraphQLError('Internal error', {
          nodes: graphQLError?.nodes,
          path: graphQLError?.path,
          extensions: { code: 'INTERNAL' },
        });
      },
    },
  });
};

interface Enveloped {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** graphql-ws on the same path as HTTP GraphQL, sharing yoga's plugins, context and error masking. */
export const attachSubscriptions = (server: Server, yoga: YogaServerInstance<ServerContext, RequestContext>, deps: Deps) => {
  const wss = new WebSocketServer({ server, path: '/graphql' });
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args) as never,
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args) as never,
      onConnect: async (ctx) => {
        try {
          await authenticate(deps, keyFrom({ connectionParams: ctx.connectionParams }));
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        const { schema: envelopedSchema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
          connectionParams: ctx.connectionParams,
        });
        const args: ExecutionArgs = {
          schema: envelopedSchema,
          operationName: payload.operationName,
          document: parse(payload.query),
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        return errors.length > 0 ? errors : args;
      },
    },
    wss,
  );
  return {
    close: async () => {
      for (const client of wss.clients) client.close(1001, 'server shutting down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
};
