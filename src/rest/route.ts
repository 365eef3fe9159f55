import type { z } from 'zod';
import type { RequestContext } from '../resolvers/context.ts';
import type { IncomingMediaDownload } from '../resolvers/incoming-media.ts';
import type { Settings } from '../runtime/settings.ts';

type Method = 'get' | 'post' | 'patch' | 'delete';

/** The settings some input schemas are built from (the document shows the running values). */
export type SchemaSettings = Pick<Settings, 'RECURRING_MIN_MS' | 'MEDIA_ALLOW_PRIVATE' | 'WEBHOOK_ALLOW_PRIVATE'>;

/** A schema, or how to build it from the settings, as the resolver does. */
type BySettings<T extends z.ZodType> = T | ((settings: SchemaSettings) => T);

export const schemaOf = <T extends z.ZodType>(schema: BySettings<T>, settings: SchemaSettings): T =>
  typeof schema === 'function' ? schema(settings) : schema;

/** `'/sessions/:sessionId/groups/:groupId'` gives `'sessionId' | 'groupId'`, so a handler cannot read a param its path lacks. */
type ParamNames<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<Rest>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

/** What a handler gets: the request's context and its parts, unparsed (the resolver parses them). */
export interface Call<Params extends string = string> {
  ctx: RequestContext;
  params: Record<Params, string>;
  body: unknown;
  query: unknown;
  /** Aborted when the client goes away, so a waiting request stops waiting. */
  signal: AbortSignal;
}

export type SuccessStatus = 200 | 201;

/** An answer whose status the handler chooses among the route's statuses. */
export interface Answer {
  answer: true;
  status: SuccessStatus;
  body: unknown;
}

export const answer = (status: SuccessStatus, body: unknown): Answer => ({ answer: true, status, body });

export const isAnswer = (value: unknown): value is Answer =>
  typeof value === 'object' && value !== null && (value as Partial<Answer>).answer === true;

interface Declared<Params extends string> {
  method: Method;
  /** the Express path (`:param`) */
  path: string;
  summary: string;
  tag: string;
  body?: BySettings<z.ZodType>;
  query?: BySettings<z.ZodObject>;
  /** the success status, 200 unless given; the first unless the handler returns an answer() with another */
  status?: SuccessStatus | [SuccessStatus, ...SuccessStatus[]];
  /** a send: honours Idempotency-Key (and answers 200) */
  idempotent?: boolean;
  handler: (call: Call<Params>) => unknown;
}

interface JsonRoute<Params extends string> extends Declared<Params> {
  /** what the route answers on success, as JSON */
  response: z.ZodType;
}

interface FileRoute<Params extends string> extends Declared<Params> {
  /** answers a file of any type (its Content-Type is the file's), not JSON */
  file: true;
  handler: (call: Call<Params>) => Promise<IncomingMediaDownload>;
}

/** One route of /v1, declared once: Express mounts it and the OpenAPI document describes it. */
export type Route = JsonRoute<string> | FileRoute<string>;

type Typed<Path extends string> = (JsonRoute<ParamNames<Path>> | FileRoute<ParamNames<Path>>) & { path: Path };

export const route = <Path extends string>(declared: Typed<Path>): Route => declared;

export const statusesOf = (route: Route): SuccessStatus[] => (Array.isArray(route.status) ? route.status : [route.status ?? 200]);
