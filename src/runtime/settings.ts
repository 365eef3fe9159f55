import { z } from 'zod';

const intFrom = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

const settingsSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres(ql)?:\/\/)/, 'must start with file: or postgres://')
    .default('file:./data/app.db'),
  BOOTSTRAP_EMAIL: z.email().optional(),
  BOOTSTRAP_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  DAILY_QUOTA: intFrom(1000),
  BODY_LIMIT: z.string().default('1mb'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  GRAPHQL_BODY_LIMIT: z.string().default('1mb'),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).default(15),
  GRAPHQL_MAX_COMPLEXITY: z.coerce.number().int().min(1).default(20_000),
  GRAPHQL_MAX_BREADTH: z.coerce.number().int().min(1).default(500),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(30),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).default(50),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(1).default(10_000),
  MAX_SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).default(100),
  MAX_SUBSCRIPTIONS_PER_ACCOUNT: z.coerce.number().int().min(1).default(500),
  MAX_CONNECTIONS_PER_KEY: z.coerce.number().int().min(1).default(20),
  RATE_LIMIT_REQUESTS: intFrom(1000),
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).default(10),
  MAX_SESSIONS_PER_ACCOUNT: intFrom(100),
  MAX_RECURRING_PER_ACCOUNT: intFrom(100),
  SHUTDOWN_TIMEOUT_MS: intFrom(10_000),
  INCOMING_BUFFER_SIZE: z.coerce.number().int().min(1).default(1000),
  MEDIA_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(16 * 1024 * 1024),
  MEDIA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(1).default(15_000),
  MEDIA_ALLOW_PRIVATE: z.stringbool().default(false),
  /** how long a received file stays downloadable from its media URL; rows older than that are purged */
  INCOMING_MEDIA_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 60 * 60 * 1000),
  /** the service's public base URL (e.g. https://api.example.com); when set, media URLs are absolute */
  PUBLIC_URL: z.url().optional(),
  BUTTONS_ENABLED: z.stringbool().default(true),
  BUTTONS_FAILURE_THRESHOLD: z.coerce.number().int().min(1).default(3),
  BUTTONS_COOLDOWN_MS: intFrom(60 * 60 * 1000),
  TYPING_MAX_MS: intFrom(30_000),
  WA_SANDBOX_URL: z.url().optional(),
  SANDBOX_EMBEDDED: z.stringbool().default(false),
  SANDBOX_CONTROL_PORT: z.coerce.number().int().min(0).max(65535).default(4011),
  /** how the embedded sandbox names phones: lid (today's WhatsApp) or pn (by phone number, as before) */
  SANDBOX_ADDRESSING: z.enum(['lid', 'pn']).default('lid'),
  /** where the embedded sandbox keeps its phones; unset: sandbox.json beside a SQLite database, else ./data/sandbox.json */
  SANDBOX_STATE_FILE: z.string().min(1).optional(),
  /** where the links run: see networkMode (unset: NETWORK_THREAD, else `thread`) */
  NETWORK_MODE: z.enum(['process', 'thread', 'inline']).optional(),
  /** older setting: `false` is NETWORK_MODE=inline; `true` is the default */
  NETWORK_THREAD: z.stringbool().optional(),
  /** V8's memory saver mode for the network process or thread (see remote-network.ts): less RSS, much more CPU */
  V8_MEMORY_SAVER: z.stringbool().default(false),
  /** each thread with a V8 heap gives memory back once quiet after a busy period (see memory-reclaim.ts) */
  MEMORY_RECLAIM: z.stringbool().default(true),
  /** how many links the re-link at start opens at a time */
  RELINK_CONCURRENCY: z.coerce.number().int().min(1).default(16),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  RECURRING_MIN_MS: z.coerce.number().int().min(1).default(10_000),
  DEVICE_LIST_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(5 * 60 * 1000),
  /** how long a send believes a number the network does not know is not on it, before asking again */
  NOT_ON_NETWORK_TTL_MS: z.coerce.number().int().min(0).default(60_000),
  /** how long a received message may wait for its write before the link leaves it unreceipted (see baileys-network.ts) */
  INCOMING_STORE_TIMEOUT_MS: z.coerce.number().int().min(1).default(30_000),
  WEBHOOK_ALLOW_PRIVATE: z.stringbool().default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).default(32),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(5_000),
  WEBHOOK_RETRY_MAX_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(60 * 60 * 1000),
  WEBHOOK_RETRY_FOR_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(3 * 24 * 60 * 60 * 1000),
  WEBHOOK_ENDPOINT_CACHE_MS: intFrom(5_000),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).default(1_000),
  WEBHOOK_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24 * 60 * 60 * 1000),
});

export type Settings = z.output<typeof settingsSchema>;

/** Read once at start; everything else receives the parsed object. */
export const loadSettings = (env: NodeJS.ProcessEnv = process.env): Settings => {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Invalid settings:\n${lines}`);
  }
  return parsed.data;
};

export const defaultSettings = (overrides: Partial<Settings> = {}): Settings => ({
  ...settingsSchema.parse({}),
  ...overrides,
});

/**
 * Where the links run: `process`, a child process of their own (the default); `thread`, a worker thread
 * of the service's process; `inline`, the service's main thread.
 */
export const networkMode = (settings: Pick<Settings, 'NETWORK_MODE' | 'NETWORK_THREAD'>): 'process' | 'thread' | 'inline' =>
  settings.NETWORK_MODE ?? (settings.NETWORK_THREAD === false ? 'inline' : 'thread');

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
