import { z } from 'zod';

/**
 * V8_SEMI_SPACE_MB's default, read before the settings are (root/malloc-tunables.ts): issue 48's load
 * measured in one run with V8's own sizing (benchmarks.md, Memory under load).
 */
export const DEFAULT_V8_SEMI_SPACE_MB = 8;

const intFrom = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

export const settingsSchema = z.object({
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(3000)
    .describe('HTTP port for REST, GraphQL and its subscriptions, the dashboard, health and metrics'),
  HOST: z.string().default('0.0.0.0').describe('interface to listen on'),
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres(ql)?:\/\/)/, 'must start with file: or postgres://')
    .default('file:./data/app.db')
    .describe('`file:...` for SQLite, `postgres://...` for PostgreSQL; migrations are applied at start'),
  BOOTSTRAP_EMAIL: z
    .email()
    .optional()
    .describe(
      'with `BOOTSTRAP_API_KEY`: create this account at start when no account has this email, so a deployment can be provisioned from its environment',
    ),
  BOOTSTRAP_API_KEY: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe('the API key of the `BOOTSTRAP_EMAIL` account (at least 16 characters)'),
  DAILY_QUOTA: intFrom(1000).describe('outgoing messages per account per UTC day, 0 = unlimited'),
  BODY_LIMIT: z.string().default('1mb').describe('largest accepted JSON body on `/v1` (`413 PAYLOAD_TOO_LARGE` above)'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino level'),
  GRAPHQL_BODY_LIMIT: z
    .string()
    .default('1mb')
    .describe('largest accepted body on `/graphql` over HTTP, and largest WebSocket message (`413 PAYLOAD_TOO_LARGE` above)'),
  GRAPHQL_MAX_DEPTH: z.coerce
    .number()
    .int()
    .min(1)
    .default(15)
    .describe('deepest field nesting of one GraphQL operation, introspection included (fragments count as the fields they hold)'),
  GRAPHQL_MAX_COMPLEXITY: z.coerce
    .number()
    .int()
    .min(1)
    .default(20_000)
    .describe(
      "cost of one operation: each object field 2, each scalar 1, a field's children weighted 1.5x per level, a connection's cost times its page size (`first`/`last` written in or passed in a variable, else 50); the standard introspection query costs about 15,500",
    ),
  GRAPHQL_MAX_BREADTH: z.coerce
    .number()
    .int()
    .min(1)
    .default(500)
    .describe("fields selected by one operation, counted once each wherever they are (introspection's query selects 240)"),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(30).describe('aliases in one operation, `__typename` included'),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).default(50).describe('directives in one operation'),
  GRAPHQL_MAX_TOKENS: z.coerce
    .number()
    .int()
    .min(1)
    .default(10_000)
    .describe('tokens (names, punctuation, values) in one GraphQL document, checked while parsing'),
  MAX_SUBSCRIPTIONS_PER_SOCKET: z.coerce
    .number()
    .int()
    .min(1)
    .default(100)
    .describe('operations running at once on one graphql-ws connection; one more is refused with `RATE_LIMITED`'),
  MAX_SUBSCRIPTIONS_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1)
    .default(500)
    .describe("operations running at once over all of an account's graphql-ws connections; one more is refused with `RATE_LIMITED`"),
  MAX_CONNECTIONS_PER_KEY: z.coerce
    .number()
    .int()
    .min(1)
    .default(20)
    .describe('open graphql-ws connections per key; one more is closed with code 4429'),
  RATE_LIMIT_REQUESTS: intFrom(1000).describe(
    'requests per key in each window of `RATE_LIMIT_WINDOW_S` seconds (REST, GraphQL over HTTP, WebSocket connections and operations); `429 RATE_LIMITED` with `Retry-After` above; 0 switches the limit off (benchmarks, load tests)',
  ),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).default(10).describe('the window of `RATE_LIMIT_REQUESTS`, in seconds'),
  MAX_SESSIONS_PER_ACCOUNT: intFrom(100).describe('sessions one account may have; creating one more is `409 CONFLICT`; 0 = no cap'),
  MAX_RECURRING_PER_ACCOUNT: intFrom(100).describe(
    'recurring timers (messages and statuses) one account may have running; one more is `409 CONFLICT`; 0 = no cap',
  ),
  SHUTDOWN_TIMEOUT_MS: intFrom(10_000).describe('how long SIGTERM waits for work to drain'),
  INCOMING_BUFFER_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .default(1000)
    .describe(
      'incoming messages kept per session; past it the oldest are dropped, counted and logged as a warning (at 1, 10, 100... drops per session)',
    ),
  MEDIA_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(16 * 1024 * 1024)
    .describe('largest media file the service fetches for a send'),
  MEDIA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(1).default(15_000).describe('timeout of that fetch'),
  MEDIA_ALLOW_PRIVATE: z
    .stringbool()
    .default(false)
    .describe(
      '`true` lets media URLs point at private, loopback and link-local addresses; unset, it is `true` when `SANDBOX_EMBEDDED=true` (`npm run demo`), so the demo can send a file served on the same machine',
    ),
  INCOMING_MEDIA_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 60 * 60 * 1000)
    .describe(
      'how long a received file stays downloadable from its `media.url` (see messages.md, Received files); older records are purged',
    ),
  STORE_STATUSES_AND_CHANNELS: z
    .stringbool()
    .default(false)
    .describe(
      '`true` stores received statuses (status@broadcast) and channel posts (@newsletter) in the message store too (docs/conversations.md); they are announced and buffered either way',
    ),
  HISTORY_SYNC_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .default(90)
    .describe(
      'history sync from the phone at link (docs/conversations.md, History from the phone): messages up to this many days old are stored as history; `0` turns the sync at link off (older messages of a chat asked for with fetchChatHistory still come)',
    ),
  HISTORY_SYNC_FULL: z
    .stringbool()
    .default(false)
    .describe('`true` asks the phone for its full history at link (and takes its FULL chunks); otherwise its recent months'),
  HISTORY_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 * 1024 * 1024)
    .describe('largest history sync blob downloaded; a larger chunk is refused with a warning, and the link carries on'),
  PUBLIC_URL: z
    .url()
    .optional()
    .describe(
      'the address clients reach the service at (e.g. `https://wa.example.com`); when set, `media.url` is absolute instead of path-relative',
    ),
  BUTTONS_ENABLED: z.stringbool().default(true).describe('`false` sends every interactive message as plain text'),
  BUTTONS_FAILURE_THRESHOLD: z.coerce
    .number()
    .int()
    .min(1)
    .default(3)
    .describe('after this many failed button sends in a row, a session sends plain text for `BUTTONS_COOLDOWN_MS`'),
  BUTTONS_COOLDOWN_MS: intFrom(60 * 60 * 1000).describe(
    'how long a session sends plain text after `BUTTONS_FAILURE_THRESHOLD` failed button sends',
  ),
  TYPING_MAX_MS: intFrom(30_000).describe('longest typing simulation; a larger `delayMs` is lowered to it'),
  SEND_PACING: z
    .enum(['on', 'off'])
    .default('on')
    .describe(
      '`off` sends every message at once, with no pacing, warm-up or back-off, for the whole process (tests, benchmarks); see docs/ban-safety.md',
    ),
  PACING_INTERVAL_MS: intFrom(1_500).describe('least time between two sends of a session (its setting `sendIntervalMs` overrides it)'),
  PACING_JITTER_MS: intFrom(1_500).describe('a random extra wait, 0 to this, added to each interval (session setting `sendJitterMs`)'),
  PACING_PER_CHAT_MS: intFrom(3_000).describe('least time between two sends to the same chat (session setting `perChatIntervalMs`)'),
  PACING_TYPING_MS_PER_CHAR: intFrom(0).describe(
    'show "typing…" before each text for this long per character, up to `TYPING_MAX_MS`; 0 = no typing (session setting `typingMsPerChar`)',
  ),
  PACING_WARMUP_CAPS: z
    .string()
    .regex(/^(\d+(,\d+)*)?$/, 'must be numbers separated by commas')
    .default('100,200,400,800,1600')
    .describe(
      "a newly linked number's daily caps, day by day from its linking (sends past a day's cap wait for the next day); empty = no warm-up (session setting `warmup: false` skips it)",
    ),
  PACING_BACKOFF_BASE_MS: intFrom(60_000).describe(
    'the first pause of a session after the network answers rate-overlimit; doubles with each answer',
  ),
  PACING_BACKOFF_MAX_MS: intFrom(30 * 60_000).describe('the longest pause after rate answers'),
  PACING_BACKOFF_RESET_MS: intFrom(10 * 60_000).describe(
    'a rate answer this long after the previous one pauses for `PACING_BACKOFF_BASE_MS` again',
  ),
  WA_SANDBOX_URL: z
    .url()
    .optional()
    .describe(
      'control URL of a running sandbox network (`npm run sandbox`); the service then links every session there instead of WhatsApp',
    ),
  SANDBOX_EMBEDDED: z.stringbool().default(false).describe('`true` runs the sandbox network inside the service (what `npm run demo` sets)'),
  SANDBOX_CONTROL_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(4011)
    .describe("port of the embedded sandbox's control API on 127.0.0.1 (`npm run sandbox` reads it too)"),
  SANDBOX_ADDRESSING: z
    .enum(['lid', 'pn'])
    .default('lid')
    .describe(
      "how the embedded sandbox names phones: `lid`, today's network (phones write from their LID, number beside it); `pn`, the older phone-number addressing",
    ),
  SANDBOX_STATE_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'where the embedded sandbox keeps its phones, keys, linked devices and groups across restarts; unset: `sandbox.json` beside a SQLite database, else `./data/sandbox.json`',
    ),
  NETWORK_MODE: z
    .enum(['process', 'thread', 'inline'])
    .optional()
    .describe(
      "where every session's Baileys socket (encryption, Signal key store) runs: `process`, one child process beside the HTTP server (it exits with the service, even a killed one); `thread`, one worker thread of the service's process; `inline`, the main thread. Unset: `inline` (or what `NETWORK_THREAD` says): the least CPU per message and memory per session; `thread` sends more per second when a second core is free",
    ),
  NETWORK_THREAD: z
    .stringbool()
    .optional()
    .describe(
      'older setting: `false` means `NETWORK_MODE=inline` (the default), `true` means `thread`; `NETWORK_MODE` wins when both are set',
    ),
  V8_MEMORY_SAVER: z
    .stringbool()
    .default(false)
    .describe(
      "`true` runs the network process (or, with `NETWORK_MODE=thread`, the whole process) in V8's memory saver mode: smaller heaps, at about 1.4x the CPU time (fewer sends answered in time on a busy machine)",
    ),
  V8_SEMI_SPACE_MB: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_V8_SEMI_SPACE_MB)
    .describe(
      "the largest size of each of V8's two semi-spaces (MB), where every new object starts: the service starts itself again at once (same process id) with `--max-semi-space-size` set to it, unless Node's options already set one; `0` leaves V8's own, which grows them under sustained load to 32 MB each. Smaller means less memory under load and more frequent young collections; measured in benchmarks.md (Memory under load)",
    ),
  MEMORY_RECLAIM: z
    .stringbool()
    .default(true)
    .describe(
      "`true`: once the service has started and loaded the links' code, one memory-reducing collection gives back what starting left (tens of MB; skipped while sessions re-link at start); then each thread with a V8 heap (the main thread, the network thread or process) gives back the memory a busy period left it once it has been quiet for 10 s (one memory-reducing collection, at most once a minute, only after the process grew by 8 MB; see benchmarks.md, Soak)",
    ),
  RELINK_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .default(16)
    .describe('how many links the re-link at start opens at a time; each place frees when its link is up or fails'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional()
    .describe(
      'several nodes (issue 34): events (subscriptions, the incoming long-poll) go through this Redis, so a client on one node sees what another raised, and the nodes count `RATE_LIMIT_REQUESTS` together; unset, both stay in the process',
    ),
  CLUSTER_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe(
      'several nodes on PostgreSQL: the secret every node shares; a request for a session another node owns is forwarded to that node with it. Unset, such a request answers `503`',
    ),
  CLUSTER_ADDRESS: z
    .url()
    .optional()
    .describe(
      'several nodes: the base URL other nodes reach this one at (e.g. `http://10.0.0.5:3000`); default `http://<HOST, or 127.0.0.1>:<port>`',
    ),
  CLUSTER_LEASE_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(10_000)
    .describe(
      "PostgreSQL: how long a node's claim on a session lasts without renewal (renewed every third of it). A node that cannot renew closes its links before it lapses; a stopped or cut-off node's sessions move after it. A crashed node's move at once",
    ),
  METRICS_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe('serves `/metrics` to requests with `Authorization: Bearer <token>` (at least 16 characters); unset, `/metrics` answers 404'),
  RECURRING_MIN_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(10_000)
    .describe('smallest `everyMs` for recurring messages and statuses (400 below)'),
  DEVICE_LIST_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(5 * 60 * 1000)
    .describe(
      "how long a link trusts a contact's device list before asking the network again (Baileys' own default; each refresh starts a new Signal session with the contact). Lower it only to test that moment, as `npm run soak` does",
    ),
  NOT_ON_NETWORK_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(60_000)
    .describe('how long a send believes a number the network said is not on WhatsApp before asking again (0: ask at every send)'),
  INCOMING_STORE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(30_000)
    .describe(
      'how long a received message may wait for its write (its stored row and media record, webhook rows) before the link leaves it unreceipted for WhatsApp to deliver again',
    ),
  WEBHOOK_ALLOW_PRIVATE: z
    .stringbool()
    .default(false)
    .describe(
      '`true` lets webhook URLs point at private, loopback and link-local addresses (local development, tests); unset, it is `true` when `SANDBOX_EMBEDDED=true` (`npm run demo`), so the demo can call a receiver on the same machine',
    ),
  WEBHOOK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(10_000)
    .describe('how long a webhook request may take before it counts as failed'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).default(32).describe('webhook requests in flight at most, per process'),
  WEBHOOK_RETRY_BASE_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(5_000)
    .describe('first retry delay of a failed webhook delivery, doubling (with jitter) up to `WEBHOOK_RETRY_MAX_MS`'),
  WEBHOOK_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(60 * 60 * 1000)
    .describe('longest delay between two attempts of a webhook delivery'),
  WEBHOOK_RETRY_FOR_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(3 * 24 * 60 * 60 * 1000)
    .describe('how long an event is retried, and how long an endpoint may fail before it is disabled'),
  WEBHOOK_ENDPOINT_CACHE_MS: intFrom(5_000).describe(
    "how long a node trusts its in-memory list of an account's endpoints (changes made on the node itself apply at once)",
  ),
  WEBHOOK_POLL_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1_000)
    .describe("how often the delivery loop looks for due retries and other nodes' events when nothing woke it"),
  WEBHOOK_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 60 * 60 * 1000)
    .describe(
      'finished webhook deliveries (delivered or given up), with their events and attempt logs, are deleted this long after the event (checked hourly)',
    ),
  SINK_POLL_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1_000)
    .describe(
      "how often an event sink's publisher looks for events written by other nodes (those written on its own node wake it at once)",
    ),
  SINK_LEASE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(15_000)
    .describe(
      'how long a node holds an event sink without renewing it: after a crash, another node publishes for the sink after at most this long',
    ),
  SINK_RETRY_BASE_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(1_000)
    .describe("first delay after an event sink's broker refused or dropped a publish, doubling (with jitter) up to `SINK_RETRY_MAX_MS`"),
  SINK_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(60_000)
    .describe("longest delay between two tries of an event sink's broker; its events wait (in order) meanwhile"),
  SINK_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe('events an event sink publishes at once at most (sent together, then their confirmations awaited)'),
});

export type Settings = z.output<typeof settingsSchema>;

/** The settings the demo turns on when they are not set: URLs the service calls may point at this machine. */
export const DEMO_PRIVATE_SETTINGS = ['WEBHOOK_ALLOW_PRIVATE', 'MEDIA_ALLOW_PRIVATE'] as const;
export type DemoPrivateSetting = (typeof DEMO_PRIVATE_SETTINGS)[number];

/** The demo's default: with SANDBOX_EMBEDDED and the setting unset, its URLs may reach this machine and the local network. */
export const demoAllowsPrivate = (
  settings: Pick<Settings, 'SANDBOX_EMBEDDED'>,
  setting: DemoPrivateSetting,
  env: NodeJS.ProcessEnv = process.env,
): boolean => settings.SANDBOX_EMBEDDED && env[setting] === undefined;

/** Read once at start; everything else receives the parsed object. */
export const loadSettings = (env: NodeJS.ProcessEnv = process.env): Settings => {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Invalid settings:\n${lines}`);
  }
  const settings = { ...parsed.data };
  for (const setting of DEMO_PRIVATE_SETTINGS) if (demoAllowsPrivate(settings, setting, env)) settings[setting] = true;
  return settings;
};

/** Whether the settings' database is PostgreSQL (DATABASE_URL is validated to be that or SQLite's file:). */
export const onPostgres = (settings: Pick<Settings, 'DATABASE_URL'>): boolean => /^postgres(ql)?:\/\//.test(settings.DATABASE_URL);

export const defaultSettings = (overrides: Partial<Settings> = {}): Settings => ({
  ...settingsSchema.parse({}),
  ...overrides,
});

/**
 * Where the links run: `inline`, the service's main thread (the default: issue 38 measured it cheaper per
 * message and per session than a thread, which pays for a second heap and a hop per message);
 * `thread`, a worker thread of the service's process; `process`, a child process of their own.
 */
export const networkMode = (settings: Pick<Settings, 'NETWORK_MODE' | 'NETWORK_THREAD'>): 'process' | 'thread' | 'inline' =>
  settings.NETWORK_MODE ?? (settings.NETWORK_THREAD === true ? 'thread' : 'inline');

// The few variables read outside the service's settings, each by one entry point; here so that this file
// stays the only reader of the environment.

/** NODE_ENV=production: GraphQL's unused-query check off, `npm run db -- reset` refused. */
export const isProduction = (env: NodeJS.ProcessEnv = process.env): boolean => env.NODE_ENV === 'production';

/** The database `npm run db` works on: DATABASE_URL as given (the command reports one it cannot use). */
export const migrationDatabaseUrl = (env: NodeJS.ProcessEnv = process.env): string => env.DATABASE_URL ?? 'file:./data/app.db';

/** The server on which temporary PostgreSQL databases are created (the project's machines and CI run one). */
export const testPostgresUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const sandboxAddressing = (value: string | undefined): 'lid' | 'pn' => {
  if (value === undefined || value === '' || value === 'lid') return 'lid';
  if (value === 'pn') return 'pn';
  throw new Error(`SANDBOX_ADDRESSING must be lid or pn (was ${value})`);
};

/** `npm run sandbox`: the standalone sandbox's settings, from its command line and environment. */
export interface SandboxSettings {
  logLevel: string;
  port: number;
  controlPort: number;
  host: string;
  /** SANDBOX_ADDRESSING: lid (default) or pn */
  addressing: 'lid' | 'pn';
  /** set with --bartender or SANDBOX_BARTENDER=true: also serve Baileys' mock-server layout */
  bartender?: { port: number; advSecretKey?: string; caFile?: string };
}

export const loadSandboxSettings = (argv: string[] = process.argv, env: NodeJS.ProcessEnv = process.env): SandboxSettings => ({
  logLevel: env.LOG_LEVEL ?? 'info',
  port: Number(env.SANDBOX_PORT ?? 4010),
  controlPort: Number(env.SANDBOX_CONTROL_PORT ?? 4011),
  host: env.SANDBOX_HOST ?? '127.0.0.1',
  addressing: sandboxAddressing(env.SANDBOX_ADDRESSING),
  ...(argv.includes('--bartender') || env.SANDBOX_BARTENDER === 'true'
    ? {
        bartender: {
          port: Number(env.SANDBOX_BARTENDER_PORT ?? 8080),
          advSecretKey: env.ADV_SECRET_KEY || undefined,
          caFile: env.SANDBOX_BARTENDER_CA_FILE || undefined,
        },
      }
    : {}),
});
