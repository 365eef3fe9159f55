import type { IncomingMessage, Server } from 'node:http';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import bytes from 'bytes';
import { GraphQLError, Kind, TypeInfo, ValidationContext, visit } from 'graphql';
import type {
  ArgumentNode,
  ASTVisitor,
  DocumentNode,
  ExecutionArgs,
  ExecutionResult,
  FieldNode,
  GraphQLField,
  GraphQLNamedType,
  GraphQLOutputType,
  IntValueNode,
  OperationDefinitionNode,
  SelectionSetNode,
  ValidationRule,
  ValueNode,
} from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { createGraphQLError, createYoga } from 'graphql-yoga';
import type { GraphiQLOptions, Plugin, YogaServerInstance } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { WebSocketServer } from 'ws';
import { authenticate, hashApiKey, takeRequest } from '../../resolvers/accounts.ts';
import type { Caller, Deps, RequestContext } from '../../resolvers/context.ts';
import { DomainError, ERROR_CODES, ERROR_STATUS, validationFailed } from '../../resolvers/errors.ts';
import type { ErrorCode } from '../../resolvers/errors.ts';
import type { ErrorDetail } from '../../resolvers/errors.ts';
import { DEFAULT_LIMIT } from '../../resolvers/paging.ts';
import { NUL_MESSAGE, nulDetails } from '../../resolvers/validate.ts';
import { schema } from '../../schema/index.ts';

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

/**
 * Made with yoga's createGraphQLError, so the error is of the graphql copy yoga and graphql-ws load
 * (graphql can be loaded twice, ESM and CJS builds), which they check with instanceof.
 */
const domainToGraphQL = (error: DomainError, from?: GraphQLError): GraphQLError =>
  createGraphQLError(error.message, {
    nodes: from?.nodes,
    path: from?.path,
    source: from?.source,
    positions: from?.positions,
    extensions: {
      code: error.code,
      ...(error.details ? { details: error.details } : {}),
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
      // Only a refused key or rate changes the HTTP status; field errors stay 200 as GraphQL clients expect.
      ...(error.code === 'UNAUTHENTICATED' ? { http: { status: ERROR_STATUS[error.code] } } : {}),
      ...(error.code === 'RATE_LIMITED'
        ? { http: { status: ERROR_STATUS[error.code], headers: { 'Retry-After': String(error.retryAfterSeconds ?? 1) } } }
        : {}),
    },
  });

// BAD_USER_INPUT: graphql-tools' mark on a variable value refused when a subscription starts.
const GRAPHQL_REFUSALS = new Set<unknown>(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

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
 * GraphQL errors carry the API's codes (docs/errors.md), so a refusal is VALIDATION_FAILED, with details
 * as on REST. Changed in place: a new error could come from the other copy of graphql, which yoga would not
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
 * Yoga's refusals of the HTTP request itself (BAD_REQUEST) in the API's codes: a body that is not
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

/** Yoga's own codes for what the API's codes already name; anything else is judged by its HTTP status. */
const YOGA_CODES: Record<string, ErrorCode> = {
  REQUEST_ENTITY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  OPERATION_RESOLUTION_FAILURE: 'VALIDATION_FAILED',
  INTERNAL_SERVER_ERROR: 'INTERNAL',
};

const codeForStatus = (status: unknown): ErrorCode =>
  status === 413
    ? 'PAYLOAD_TOO_LARGE'
    : status === 415
      ? 'UNSUPPORTED_MEDIA_TYPE'
      : typeof status === 'number' && status >= 500
        ? 'INTERNAL'
        : 'VALIDATION_FAILED';

/** Every GraphQL error carries one of the API's codes (docs/errors.md). Changed in place, as markRefusal is. */
const withKnownCode = (error: GraphQLError): GraphQLError => {
  const extensions = error.extensions;
  if (ERROR_CODES.has(String(extensions.code))) return error;
  const http = extensions.http as { status?: unknown } | undefined;
  extensions.code = YOGA_CODES[String(extensions.code)] ?? codeForStatus(http?.status);
  if (extensions.code === 'VALIDATION_FAILED') extensions.details ??= [{ path: '(request)', message: error.message }];
  return error;
};

/** Validation errors are returned by yoga without passing through maskError, so they are marked here. */
const useRefusalCodes: Plugin = {
  onValidate:
    () =>
    ({ result, setResult }) => {
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
const refuseNul = ({
  args,
  setResultAndStopExecution,
}: {
  args: ExecutionArgs;
  setResultAndStopExecution: (result: ExecutionResult) => void;
}) => {
  const details = nulInRequest(args);
  if (details.length === 0) return;
  const { message } = validationFailed(details);
  // With data present yoga keeps the 200 of other field-level refusals.
  setResultAndStopExecution({ data: null, errors: [new GraphQLError(message, { extensions: { code: 'VALIDATION_FAILED', details } })] });
};

const useNulCheck: Plugin = { onExecute: refuseNul, onSubscribe: refuseNul };

/**
 * The cost limit with page sizes passed in variables, or left to the default page, counted as the rule
 * counts those written in (validation results are cached by document, so variables are measured here,
 * before anything runs). Refused as the rule refuses.
 */
const usePageSizedCost = (settings: Deps['settings']): Plugin => {
  const refuse = ({
    args,
    setResultAndStopExecution,
  }: {
    args: ExecutionArgs;
    setResultAndStopExecution: (result: ExecutionResult) => void;
  }) => {
    const measured = costOf(settings, args);
    if (measured?.refusal) setResultAndStopExecution({ errors: [measured.refusal] });
  };
  return { onExecute: refuse, onSubscribe: refuse };
};

/**
 * Subscriptions are capped per connection and per account on graphql-ws; yoga would also serve them over
 * HTTP (server-sent events), outside those caps, so there they are refused.
 */
const useSubscriptionsOverWebSocket: Plugin = {
  onSubscribe: ({ args, setResultAndStopExecution }) => {
    if ((args.contextValue as { socket?: unknown }).socket !== undefined) return;
    const message = 'Subscriptions are served over graphql-ws on /graphql';
    const extensions = { code: 'VALIDATION_FAILED', details: [{ path: 'query', message }], http: { status: 400 } };
    setResultAndStopExecution({ errors: [createGraphQLError(message, { extensions })] });
  },
};

/**
 * The key comes before anything else (docs/api-reference.md#errors), so a request without one is a 401 even if its query
 * is invalid. The caller found is handed to the context of the same request instead of being looked up twice.
 */
const useKeyFirst = (deps: Deps, callers: WeakMap<Request, Caller>): Plugin<Record<string, unknown>, ServerContext> => ({
  onParams: async ({ context, request }) => {
    const caller = await authenticate(deps, keyFrom(context));
    await takeRequest(deps, caller);
    callers.set(request, caller);
  },
});

/** An operation over a limit: VALIDATION_FAILED with the limit named, before anything runs. */
const refuseOver = (context: ValidationContext | null, error: GraphQLError): void => {
  const message = error.message.replace(/^Syntax Error: /, '');
  // As graphql's own validation errors: 400, or 200 for an application/json client (GraphQL over HTTP).
  const extensions = { code: 'VALIDATION_FAILED', details: [{ path: 'query', message }], http: { spec: true, status: 400 } };
  context?.reportError(createGraphQLError(message, { extensions }));
};

/** The limits an operation is measured against when it is validated; tokens are counted while parsing. */
export type OperationLimit = 'depth' | 'aliases' | 'directives' | 'cost' | 'breadth';

/** Called with what an operation measured against a limit it is within (tests measure the dashboard with it). */
export type OnMeasured = (limit: OperationLimit, found: number) => void;

const armorCallbacks = (limit: OperationLimit, onMeasured?: OnMeasured) => ({
  exposeLimits: true,
  propagateOnRejection: false,
  onReject: [refuseOver],
  onAccept: onMeasured ? [(_context: ValidationContext | null, { n }: { n: number }) => onMeasured(limit, n)] : [],
});

const costOptions = (settings: Deps['settings'], onMeasured?: OnMeasured) => ({
  ...armorCallbacks('cost', onMeasured),
  maxCost: settings.GRAPHQL_MAX_COMPLEXITY,
  ignoreIntrospection: false,
  flattenFragments: true,
});

/**
 * graphql-armor's limits, each counting every field, alias and directive, introspection included.
 * Breadth is the number of fields an operation selects: armor's cost with every field at 1 and no
 * weight for depth. The cost here sees only page sizes written as numbers; usePageSizedCost measures it
 * again with those passed in variables or left to the default.
 */
export const limitRules = (settings: Deps['settings'], onMeasured?: OnMeasured): ValidationRule[] => {
  const common = (limit: OperationLimit) => armorCallbacks(limit, onMeasured);
  return [
    maxDepthRule({ ...common('depth'), n: settings.GRAPHQL_MAX_DEPTH, ignoreIntrospection: false, flattenFragments: true }),
    maxAliasesRule({ ...common('aliases'), n: settings.GRAPHQL_MAX_ALIASES, allowList: [] }),
    maxDirectivesRule({ ...common('directives'), n: settings.GRAPHQL_MAX_DIRECTIVES }),
    costLimitRule(costOptions(settings, onMeasured)),
    breadthRule(settings.GRAPHQL_MAX_BREADTH, onMeasured),
  ];
};

const armor = (settings: Deps['settings']): Plugin[] => [
  maxTokensPlugin({ n: settings.GRAPHQL_MAX_TOKENS }),
  {
    onValidate: ({ addValidationRule }) => {
      for (const rule of limitRules(settings)) addValidationRule(rule);
    },
  },
];

/** What an operation's cost is measured on: its document and, for the page sizes, its variables. */
export type CostArgs = Pick<ExecutionArgs, 'schema' | 'document' | 'operationName' | 'variableValues'>;

const PAGE_ARGUMENTS = new Set(['first', 'last']);

const intValue = (n: number): IntValueNode => ({ kind: Kind.INT, value: String(n) });

// By shape, not graphql's predicates: graphql can be loaded twice (ESM and CJS builds), and then they lie.
const namedTypeOf = (type: GraphQLOutputType): GraphQLNamedType => ('ofType' in type ? namedTypeOf(type.ofType) : type);

const fieldOf = (parent: GraphQLNamedType | null | undefined, name: string): GraphQLField<unknown, unknown> | undefined => {
  if (!parent || !('getFields' in parent)) return undefined;
  const field = parent.getFields()[name];
  return field && 'args' in field ? field : undefined;
};

/**
 * The operation as graphql-armor's cost rule should see it, which multiplies a field's cost by its
 * `first`/`last` only when written as a number: page sizes passed in variables written in, and a
 * connection given none its default page, which is what it returns then.
 */
const withPageSizes = (
  { schema, document, variableValues }: CostArgs,
  operation: OperationDefinitionNode,
): { document: DocumentNode; operation: OperationDefinitionNode } => {
  const variables = variableValues ?? {};
  const defaults = new Map(operation.variableDefinitions?.map((definition) => [definition.variable.name.value, definition.defaultValue]));
  const pageSize = (value: ValueNode): ValueNode => {
    if (value.kind !== Kind.VARIABLE) return value;
    const name = value.name.value;
    const fallback = defaults.get(name);
    const given = variables[name] ?? (fallback?.kind === Kind.INT ? Number(fallback.value) : undefined);
    return typeof given === 'number' && Number.isInteger(given) ? intValue(given) : { kind: Kind.NULL };
  };
  const pageArguments = (field: FieldNode, definition?: GraphQLField<unknown, unknown>): readonly ArgumentNode[] | undefined => {
    const written = field.arguments ?? [];
    const others = written.filter((argument) => !PAGE_ARGUMENTS.has(argument.name.value));
    const pages = written
      .filter((argument) => PAGE_ARGUMENTS.has(argument.name.value))
      .map((argument) => ({ ...argument, value: pageSize(argument.value) }))
      .filter((argument) => argument.value.kind === Kind.INT);
    const takes = (name: string) => definition?.args.some((argument) => argument.name === name) === true;
    if (pages.length === 0 && takes('first') && takes('last')) {
      pages.push({ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'first' }, value: intValue(DEFAULT_LIMIT) });
    }
    return [...others, ...pages];
  };
  const inSet = (set: SelectionSetNode, parent: GraphQLNamedType | null | undefined): SelectionSetNode => ({
    ...set,
    selections: set.selections.map((selection) => {
      if (selection.kind === Kind.FIELD) {
        const definition = fieldOf(parent, selection.name.value);
        return {
          ...selection,
          arguments: pageArguments(selection, definition),
          selectionSet: selection.selectionSet && inSet(selection.selectionSet, definition && namedTypeOf(definition.type)),
        };
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        return { ...selection, selectionSet: inSet(selection.selectionSet, type) };
      }
      return selection;
    }),
  });
  const roots = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() };
  const measured = { ...operation, selectionSet: inSet(operation.selectionSet, roots[operation.operation]) };
  // The fragments the operation spreads, looked up by the rule in the document.
  const fragments = document.definitions
    .filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)
    .map((fragment) => ({ ...fragment, selectionSet: inSet(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value)) }));
  return { document: { ...document, definitions: [measured, ...fragments] }, operation: measured };
};

/**
 * An operation's cost as graphql-armor counts it, with its page sizes as the request asks for them:
 * written in, passed in variables, or the default page. A refusal, as the validation rule's, when it
 * is over the limit; undefined for a document yoga refuses anyway (no such operation).
 */
export const costOf = (
  settings: Deps['settings'],
  args: CostArgs,
): { cost: number; refusal?: undefined } | { refusal: GraphQLError } | undefined => {
  const operations = args.document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const chosen = args.operationName
    ? operations.find((o) => o.name?.value === args.operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  if (!chosen) return undefined;
  const { document, operation } = withPageSizes(args, chosen);
  const refusals: GraphQLError[] = [];
  let cost = 0;
  const context = new ValidationContext(args.schema, document, new TypeInfo(args.schema), (error) => refusals.push(error));
  const measure: OnMeasured = (_limit, found) => {
    cost = found;
  };
  costLimitRule(costOptions(settings, measure))(context).onOperationDefinitionEnter(operation);
  const [refusal] = refusals;
  return refusal ? { refusal } : { cost };
};

/**
 * The fields an operation selects, each counted once wherever it is, a fragment as the fields it holds
 * each time it is spread. graphql-armor's cost would also multiply by page sizes (`first: 50`) written
 * as literals, so a connection's page size would count as breadth; here it does not.
 */
const breadthRule =
  (max: number, onMeasured?: OnMeasured): ValidationRule =>
  (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, number>();
    const count = (set: SelectionSetNode, visiting: Set<string>): number => {
      let found = 0;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) found += 1 + (selection.selectionSet ? count(selection.selectionSet, visiting) : 0);
        else if (selection.kind === Kind.INLINE_FRAGMENT) found += count(selection.selectionSet, visiting);
        else {
          const name = selection.name.value;
          const fragment = context.getFragment(name);
          // A cycle is graphql's own validation error; it adds nothing here.
          if (!fragment || visiting.has(name)) continue;
          if (!fragments.has(name)) fragments.set(name, count(fragment.selectionSet, new Set([...visiting, name])));
          found += fragments.get(name) ?? 0;
        }
      }
      return found;
    };
    return {
      OperationDefinition: (operation: OperationDefinitionNode) => {
        const found = count(operation.selectionSet, new Set());
        if (found > max) refuseOver(context, new GraphQLError(`Breadth limit of ${max} exceeded, found ${found}.`));
        else onMeasured?.('breadth', found);
      },
    };
  };

/** Parsed documents are cached by their source; bounded by total source size, so large queries cannot pile up. */
const CACHE_MAX_SOURCE_CHARS = 2 * 1024 * 1024;
const CACHE_MAX_ENTRY_CHARS = 64 * 1024;

const boundedCache = <V extends {}>() => {
  const cache = new LRUCache<string, V>({
    max: 1024,
    maxSize: CACHE_MAX_SOURCE_CHARS,
    sizeCalculation: (_value, key) => Math.max(1, key.length),
  });
  return {
    get: (key: string) => cache.get(key),
    set: (key: string, value: V) => {
      if (key.length <= CACHE_MAX_ENTRY_CHARS) cache.set(key, value);
    },
  };
};

/**
 * GraphiQL with its scripts, styles and workers inlined in the page (render-graphiql), so it works on
 * a machine without internet. The page is ~9 MB; its module is loaded and the page built once per
 * process, on first request, so a service nobody opens GraphiQL on never holds it.
 */
let graphiqlHtml: Promise<string> | undefined;
const graphiqlPage = (options: GraphiQLOptions): Promise<string> => {
  graphiqlHtml ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => withDashboardKey(renderGraphiQL(options)));
  return graphiqlHtml;
};

/** Where the dashboard keeps the signed-in key for the tab (dashboard/src/client.ts). */
const DASHBOARD_KEY_ITEM = 'wa-dashboard-api-key';
const RENDER_CALL = 'YogaGraphiQL.renderYogaGraphiQL(';

/**
 * GraphiQL opened from the dashboard (same tab, same origin, so the same sessionStorage) starts with the
 * signed-in key in its headers editor; opened otherwise, with the empty x-api-key entry. The page's own
 * render call is wrapped, as render-graphiql offers no hook before it.
 */
export const withDashboardKey = (html: string): string => {
  const at = html.lastIndexOf(RENDER_CALL);
  if (at < 0) throw new Error("GraphiQL's page has no render call to give the dashboard's key to");
  const wrapped =
    `((root, options) => { const key = sessionStorage.getItem(${JSON.stringify(DASHBOARD_KEY_ITEM)}); ` +
    `return YogaGraphiQL.renderYogaGraphiQL(root, key ? { ...options, headers: JSON.stringify({ 'x-api-key': key }, null, 2) } : options); })(`;
  return html.slice(0, at) + wrapped + html.slice(at + RENDER_CALL.length);
};

export const createGraphQL = (deps: Deps): YogaServerInstance<ServerContext, RequestContext> => {
  const callers = new WeakMap<Request, Caller>();
  return createYoga<ServerContext, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    graphiql: {
      subscriptionsProtocol: 'WS',
      title: 'Messaging API',
      defaultEditorToolsVisibility: 'headers',
      headers: JSON.stringify({ 'x-api-key': '' }, null, 2),
      defaultQuery: 'query Me {\n  me {\n    id\n    email\n  }\n}\n',
    },
    renderGraphiQL: graphiqlPage,
    landingPage: false,
    maxRequestBodySize: bytes.parse(deps.settings.GRAPHQL_BODY_LIMIT) ?? 1024 * 1024,
    multipart: false,
    parserAndValidationCache: { documentCache: boundedCache<DocumentNode>(), errorCache: boundedCache<Error>() },
    plugins: [
      useKeyFirst(deps, callers),
      ...armor(deps.settings),
      useRefusalCodes,
      useNulCheck,
      usePageSizedCost(deps.settings),
      useSubscriptionsOverWebSocket,
    ],
    context: async (sc): Promise<RequestContext> => {
      const caller = callers.get(sc.request) ?? (await authenticate(deps, keyFrom(sc)));
      const requestId = sc.req?.id === undefined ? crypto.randomUUID() : String(sc.req.id);
      const idempotencyKeyHeader = sc.request?.headers.get('idempotency-key') ?? undefined;
      return { ...deps, caller, requestId, logger: deps.logger.child({ requestId }), idempotencyKeyHeader };
    },
    maskedErrors: {
      maskError: (error) => {
        // Duck-typed: graphql can be loaded twice (ESM and CJS builds), and then instanceof lies.
        const graphQLError = isGraphQLError(error) ? error : undefined;
        const original = graphQLError?.originalError ?? error;
        if (original instanceof DomainError) return domainToGraphQL(original, graphQLError);
        // Pothos refuses connection arguments itself (a negative `first`, `first` with `before`, a cursor that is not one).
        if ((original as { name?: unknown }).name === 'PothosValidationError') {
          const field = graphQLError?.path?.at(-1);
          const detail = { path: typeof field === 'string' ? field : 'query', message: (original as Error).message };
          return domainToGraphQL(validationFailed([detail]), graphQLError);
        }
        if (graphQLError && isRefusal(graphQLError)) return markRefusal(graphQLError);
        if (graphQLError?.extensions.code === 'BAD_REQUEST') return markBadRequest(graphQLError);
        // Yoga's other HTTP-level errors carry no original error and are safe to show, in the API's codes.
        if (graphQLError && !graphQLError.originalError) return withKnownCode(graphQLError);
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

/** WebSocket close codes beyond graphql-ws' own (4403 also when a key stops working). */
export const CLOSE_KEY_REVOKED = 4403;
export const CLOSE_TOO_MANY_CONNECTIONS = 4429;
/** How often open sockets' keys are checked again, so a rotated or removed key loses them within AUTH_CACHE_MS. */
const KEY_RECHECK_MS = 2_000;

interface OpenSocket {
  accountId: string;
  keyHash: string;
  subscriptions: () => number;
  close: (code: number, reason: string) => void;
}

const rateLimited = (error: DomainError): GraphQLError[] => [domainToGraphQL(error)];

/**
 * The sockets of this process, by key; a socket belongs to the node it is open on, so this stays in
 * memory on each node, unlike request counters (shared through Redis when REDIS_URL is set).
 */
const createSocketRegistry = () => {
  const byKey = new Map<string, Set<OpenSocket>>();
  const byAccount = new Map<string, Set<OpenSocket>>();
  const add = <K>(map: Map<K, Set<OpenSocket>>, key: K, socket: OpenSocket) => {
    let set = map.get(key);
    if (!set) {
      set = new Set();
      map.set(key, set);
    }
    set.add(socket);
  };
  const remove = <K>(map: Map<K, Set<OpenSocket>>, key: K, socket: OpenSocket) => {
    const set = map.get(key);
    set?.delete(socket);
    if (set?.size === 0) map.delete(key);
  };
  return {
    connections: (keyHash: string) => byKey.get(keyHash)?.size ?? 0,
    subscriptions: (accountId: string) => {
      let total = 0;
      for (const socket of byAccount.get(accountId) ?? []) total += socket.subscriptions();
      return total;
    },
    keyHashes: () => [...byKey.keys()],
    socketsOf: (keyHash: string) => [...(byKey.get(keyHash) ?? [])],
    add: (socket: OpenSocket) => {
      add(byKey, socket.keyHash, socket);
      add(byAccount, socket.accountId, socket);
    },
    remove: (socket: OpenSocket) => {
      remove(byKey, socket.keyHash, socket);
      remove(byAccount, socket.accountId, socket);
    },
  };
};

/** graphql-ws on the same path as HTTP GraphQL, sharing yoga's plugins, context and error masking. */
export const attachSubscriptions = (server: Server, yoga: YogaServerInstance<ServerContext, RequestContext>, deps: Deps) => {
  const { settings } = deps;
  const wss = new WebSocketServer({ server, path: '/graphql', maxPayload: bytes.parse(settings.GRAPHQL_BODY_LIMIT) ?? 1024 * 1024 });
  const registry = createSocketRegistry();
  const opened = new WeakMap<object, OpenSocket>();

  // A key rotated or removed (by the CLI, in another process) closes its sockets: one query for all keys.
  const recheck = setInterval(() => {
    const hashes = registry.keyHashes();
    if (hashes.length === 0) return;
    deps.db.account
      .findMany({ where: { apiKeyHash: { in: hashes } }, select: { apiKeyHash: true } })
      .then((rows) => {
        const alive = new Set(rows.map((row) => row.apiKeyHash));
        for (const hash of hashes) {
          if (alive.has(hash)) continue;
          for (const socket of registry.socketsOf(hash)) socket.close(CLOSE_KEY_REVOKED, 'Forbidden: the API key is no longer valid');
        }
      })
      .catch((err: unknown) => deps.logger.warn({ err }, 'checking the keys of open subscriptions failed'));
  }, KEY_RECHECK_MS);
  recheck.unref();

  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args) as never,
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args) as never,
      onConnect: async (ctx) => {
        const key = keyFrom({ connectionParams: ctx.connectionParams });
        let caller: Caller;
        try {
          caller = await authenticate(deps, key);
        } catch {
          return false;
        }
        const socket = ctx.extra.socket;
        const keyHash = hashApiKey(caller.apiKey);
        if ((await deps.rateLimit.take(caller.accountId)) !== null || registry.connections(keyHash) >= settings.MAX_CONNECTIONS_PER_KEY) {
          socket.close(CLOSE_TOO_MANY_CONNECTIONS, 'Too many connections or requests for this key');
          return false;
        }
        const open: OpenSocket = {
          accountId: caller.accountId,
          keyHash,
          subscriptions: () => Object.keys(ctx.subscriptions).length,
          close: (code, reason) => socket.close(code, reason),
        };
        opened.set(ctx, open);
        registry.add(open);
        return true;
      },
      onClose: (ctx) => {
        const open = opened.get(ctx);
        if (open) registry.remove(open);
      },
      onSubscribe: async (ctx, _id, payload) => {
        const open = opened.get(ctx);
        if (open) {
          // graphql-ws has already counted this subscription in ctx.subscriptions.
          if (open.subscriptions() > settings.MAX_SUBSCRIPTIONS_PER_SOCKET) {
            return rateLimited(
              new DomainError('RATE_LIMITED', `At most ${settings.MAX_SUBSCRIPTIONS_PER_SOCKET} operations at once on one connection`, {
                retryAfterSeconds: 1,
              }),
            );
          }
          if (registry.subscriptions(open.accountId) > settings.MAX_SUBSCRIPTIONS_PER_ACCOUNT) {
            return rateLimited(
              new DomainError('RATE_LIMITED', `At most ${settings.MAX_SUBSCRIPTIONS_PER_ACCOUNT} operations at once for one account`, {
                retryAfterSeconds: 1,
              }),
            );
          }
          const retryAfterSeconds = await deps.rateLimit.take(open.accountId);
          if (retryAfterSeconds !== null) {
            return rateLimited(
              new DomainError('RATE_LIMITED', `Too many requests for this key; retry in ${retryAfterSeconds} s`, { retryAfterSeconds }),
            );
          }
        }
        const {
          schema: envelopedSchema,
          execute,
          subscribe,
          contextFactory,
          parse,
          validate,
        } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
          connectionParams: ctx.connectionParams,
        });
        try {
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
        } catch (err) {
          // A syntax error (or the token limit) and a key that stopped working answer this operation only.
          if (err instanceof DomainError) return [domainToGraphQL(err)];
          if (isGraphQLError(err)) return [markRefusal(err)];
          throw err;
        }
      },
    },
    wss,
  );
  return {
    close: async () => {
      clearInterval(recheck);
      for (const client of wss.clients) client.close(1001, 'server shutting down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
};

/** The mutations that honour Idempotency-Key (they take an `idempotencyKey` argument): the hop to a session's owner may send them again. */
export const idempotentMutations = (): ReadonlySet<string> =>
  new Set(
    Object.values(schema.getMutationType()?.getFields() ?? {})
      .filter((field) => field.args.some((arg) => arg.name === 'idempotencyKey'))
      .map((field) => field.name),
  );
