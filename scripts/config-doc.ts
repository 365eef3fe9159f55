/**
 * Writes docs/configuration.md from the settings schema (src/runtime/settings.ts): every environment
 * variable with its default, what it accepts and its description. `npm run docs` writes the page;
 * `--check` exits 1 when the committed page differs (test/generated-files.test.ts runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { loadSandboxSettings, settingsSchema, testPostgresUrl } from '../src/runtime/settings.ts';

export const PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/** The page's sections, in order; every variable of the schema must be in exactly one. */
const GROUPS: Array<{ title: string; intro?: string; names: string[] }> = [
  {
    title: 'Server',
    names: ['PORT', 'HOST', 'PUBLIC_URL', 'LOG_LEVEL', 'BODY_LIMIT', 'SHUTDOWN_TIMEOUT_MS', 'METRICS_TOKEN'],
  },
  {
    title: 'Database and accounts',
    intro: 'See [operations.md](operations.md) for the databases, migrations and the `npm run account` command.',
    names: ['DATABASE_URL', 'BOOTSTRAP_EMAIL', 'BOOTSTRAP_API_KEY'],
  },
  {
    title: 'Several nodes',
    intro:
      'Several service processes on one PostgreSQL database; see [operations.md](operations.md#several-nodes) and the README. SQLite is always one node.',
    names: ['REDIS_URL', 'CLUSTER_SECRET', 'CLUSTER_ADDRESS', 'CLUSTER_LEASE_TTL_MS'],
  },
  {
    title: 'Quotas and rate limits',
    names: ['DAILY_QUOTA', 'RATE_LIMIT_REQUESTS', 'RATE_LIMIT_WINDOW_S', 'MAX_SESSIONS_PER_ACCOUNT', 'MAX_RECURRING_PER_ACCOUNT'],
  },
  {
    title: 'GraphQL',
    intro: 'Limits of one operation and of graphql-ws connections; see [graphql.md](graphql.md) and [errors.md](errors.md).',
    names: [
      'GRAPHQL_BODY_LIMIT',
      'GRAPHQL_MAX_DEPTH',
      'GRAPHQL_MAX_COMPLEXITY',
      'GRAPHQL_MAX_BREADTH',
      'GRAPHQL_MAX_ALIASES',
      'GRAPHQL_MAX_DIRECTIVES',
      'GRAPHQL_MAX_TOKENS',
      'MAX_CONNECTIONS_PER_KEY',
      'MAX_SUBSCRIPTIONS_PER_SOCKET',
      'MAX_SUBSCRIPTIONS_PER_ACCOUNT',
    ],
  },
  {
    title: 'Messages and media',
    intro: 'See [messages.md](messages.md) and [conversations.md](conversations.md).',
    names: [
      'MEDIA_MAX_BYTES',
      'MEDIA_FETCH_TIMEOUT_MS',
      'MEDIA_ALLOW_PRIVATE',
      'INCOMING_BUFFER_SIZE',
      'INCOMING_MEDIA_RETENTION_MS',
      'STORE_STATUSES_AND_CHANNELS',
      'HISTORY_SYNC_DAYS',
      'HISTORY_SYNC_FULL',
      'HISTORY_MAX_BYTES',
      'INCOMING_STORE_TIMEOUT_MS',
      'NOT_ON_NETWORK_TTL_MS',
      'BUTTONS_ENABLED',
      'BUTTONS_FAILURE_THRESHOLD',
      'BUTTONS_COOLDOWN_MS',
      'TYPING_MAX_MS',
      'RECURRING_MIN_MS',
    ],
  },
  {
    title: 'Send pacing and back-off',
    intro:
      'How every send is paced, how newly linked numbers warm up, and how a session backs off when the network pushes back; each session can override the pacing in its settings. See [ban-safety.md](ban-safety.md).',
    names: [
      'SEND_PACING',
      'PACING_INTERVAL_MS',
      'PACING_JITTER_MS',
      'PACING_PER_CHAT_MS',
      'PACING_TYPING_MS_PER_CHAR',
      'PACING_WARMUP_CAPS',
      'PACING_BACKOFF_BASE_MS',
      'PACING_BACKOFF_MAX_MS',
      'PACING_BACKOFF_RESET_MS',
    ],
  },
  {
    title: 'Links to the network',
    intro: "Where the sessions' Baileys sockets run and how they use memory; see [sessions.md](sessions.md).",
    names: [
      'NETWORK_MODE',
      'NETWORK_THREAD',
      'RELINK_CONCURRENCY',
      'DEVICE_LIST_TTL_MS',
      'V8_MEMORY_SAVER',
      'V8_SEMI_SPACE_MB',
      'MEMORY_RECLAIM',
    ],
  },
  {
    title: 'Webhooks',
    intro: 'See [events-and-webhooks.md](events-and-webhooks.md).',
    names: [
      'WEBHOOK_ALLOW_PRIVATE',
      'WEBHOOK_TIMEOUT_MS',
      'WEBHOOK_CONCURRENCY',
      'WEBHOOK_RETRY_BASE_MS',
      'WEBHOOK_RETRY_MAX_MS',
      'WEBHOOK_RETRY_FOR_MS',
      'WEBHOOK_ENDPOINT_CACHE_MS',
      'WEBHOOK_POLL_MS',
      'WEBHOOK_RETENTION_MS',
    ],
  },
  {
    title: 'Event sinks (RabbitMQ, NATS JetStream)',
    intro: 'See [sinks.md](sinks.md).',
    names: ['SINK_POLL_MS', 'SINK_LEASE_MS', 'SINK_RETRY_BASE_MS', 'SINK_RETRY_MAX_MS', 'SINK_BATCH'],
  },
  {
    title: 'Sandbox network',
    intro: 'The offline WhatsApp network the service can link to instead of WhatsApp; see [sandbox.md](sandbox.md).',
    names: ['SANDBOX_EMBEDDED', 'WA_SANDBOX_URL', 'SANDBOX_CONTROL_PORT', 'SANDBOX_ADDRESSING', 'SANDBOX_STATE_FILE'],
  },
];

/** `npm run sandbox` reads these (src/runtime/settings.ts, loadSandboxSettings); defaults are read from it. */
const sandboxDefaults = loadSandboxSettings(['--bartender'], {});
const STANDALONE_SANDBOX: Array<{ name: string; default: string; description: string }> = [
  { name: 'SANDBOX_PORT', default: String(sandboxDefaults.port), description: "the sandbox's WebSocket port (Baileys connects there)" },
  { name: 'SANDBOX_CONTROL_PORT', default: String(sandboxDefaults.controlPort), description: 'its control API (HTTP and JSON)' },
  {
    name: 'SANDBOX_HOST',
    default: sandboxDefaults.host,
    description: 'the interface both listen on (`0.0.0.0` to run it in a container with its ports mapped)',
  },
  { name: 'SANDBOX_ADDRESSING', default: sandboxDefaults.addressing, description: '`lid` or `pn`, as for the embedded sandbox above' },
  { name: 'LOG_LEVEL', default: sandboxDefaults.logLevel, description: 'pino level' },
  {
    name: 'SANDBOX_BARTENDER',
    default: 'false',
    description: "`true` (or `npm run sandbox -- --bartender`) also serves Baileys' mock-server layout on a TLS port",
  },
  { name: 'SANDBOX_BARTENDER_PORT', default: String(sandboxDefaults.bartender?.port), description: 'that TLS port' },
  {
    name: 'ADV_SECRET_KEY',
    default: 'unset (any key)',
    description: 'when set (base64, 32 bytes), a QR scan whose ADV secret differs is refused, as bartender does',
  },
  {
    name: 'SANDBOX_BARTENDER_CA_FILE',
    default: 'unset',
    description: "a path where the sandbox writes that port's self-signed certificate",
  },
];

const OTHER: Array<{ name: string; default: string; description: string }> = [
  {
    name: 'GLIBC_TUNABLES',
    default: 'unset',
    description:
      "glibc's own variable. Unset on Linux with glibc, the service starts itself again at once (same process id, `process.execve`) with `glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072`, so large blocks freed after start and linking go back to the system (30–55 MB less with one session, [benchmarks-peers.md](benchmarks-peers.md#5-where-the-gap-comes-from)); any value you set, even empty, is left as it is. glibc 2.36 shows only the first tunable in `/proc/<pid>/environ` once it has parsed them; both apply (`ld.so --list-tunables`)",
  },
  {
    name: 'NODE_ENV',
    default: 'unset',
    description: "`production` turns GraphQL's unused-query check off and makes `npm run db -- reset` refuse to run",
  },
  {
    name: 'TEST_POSTGRES_URL',
    default: testPostgresUrl({}),
    description: 'the tests and benchmarks: the PostgreSQL server on which they create and drop their own databases',
  },
];

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Unwraps default and optional: the schema that validates a value, its default (undefined: unset). */
const unwrap = (schema: z.ZodType): { inner: z.ZodType; fallback: unknown } => {
  let inner = schema;
  let fallback: unknown;
  for (;;) {
    const def = defOf(inner);
    if (def.type === 'default') {
      fallback = typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
      inner = def.innerType as z.ZodType;
    } else if (def.type === 'optional') inner = def.innerType as z.ZodType;
    else return { inner, fallback };
  }
};

const code = (value: string): string => `\`${value}\``;

const DURATIONS: Array<[number, string]> = [
  [24 * 60 * 60 * 1000, 'day'],
  [60 * 60 * 1000, 'hour'],
  [60 * 1000, 'minute'],
  [1000, 'second'],
];

/** `604800000` (7 days), `16777216` (16 MiB): the raw value to set, and a reading of it. */
const readable = (name: string, value: unknown): string => {
  if (value === undefined) return 'unset';
  const raw = code(String(value));
  if (typeof value !== 'number') return raw;
  if (name.endsWith('_MS')) {
    const unit = DURATIONS.find(([ms]) => value >= ms && value % ms === 0);
    if (unit) {
      const n = value / unit[0];
      return `${raw} (${n} ${unit[1]}${n === 1 ? '' : 's'})`;
    }
  }
  if (name.endsWith('_BYTES') && value % (1024 * 1024) === 0) return `${raw} (${value / (1024 * 1024)} MiB)`;
  return raw;
};

/** What a variable accepts, read from its schema. */
const accepts = (schema: z.ZodType): string => {
  const def = defOf(schema);
  const checks = ((def.checks ?? []) as Array<{ _zod: { def: Record<string, unknown> } }>).map((c) => c._zod.def);
  const check = (kind: string) => checks.find((c) => c.check === kind);
  if (def.type === 'pipe') return 'boolean: `true` or `false`';
  if (def.type === 'enum')
    return Object.values(def.entries as Record<string, string>)
      .map(code)
      .join(', ');
  if (def.type === 'number') {
    const min = check('greater_than')?.value as number | undefined;
    const max = check('less_than')?.value as number | undefined;
    const kind = checks.some((c) => c.check === 'number_format') ? 'integer' : 'number';
    if (min !== undefined && max !== undefined) return `${kind}, ${min} to ${max}`;
    if (min !== undefined) return `${kind}, at least ${min}`;
    return kind;
  }
  if (def.type === 'string') {
    const format = (def.format ?? checks.find((c) => c.check === 'string_format')?.format) as string | undefined;
    if (format === 'url') return 'URL';
    if (format === 'email') return 'email address';
    const min = check('min_length')?.minimum as number | undefined;
    if (format === 'regex') return 'text (see meaning)';
    return min !== undefined && min > 1 ? `text, at least ${min} characters` : 'text';
  }
  return def.type;
};

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

export const configurationPage = (): string => {
  const shape = settingsSchema.shape as Record<string, z.ZodType>;
  const grouped = GROUPS.flatMap((g) => g.names);
  const missing = Object.keys(shape).filter((name) => !grouped.includes(name));
  const unknown = grouped.filter((name) => !(name in shape));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(
      `scripts/config-doc.ts: put every setting in one group (missing: ${missing.join(', ')}; unknown: ${unknown.join(', ')})`,
    );
  }
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs` (scripts/config-doc.ts) from the settings schema in src/runtime/settings.ts; edit',
    '     the descriptions there. test/generated-files.test.ts fails when this page is stale. -->',
    '',
    'The service reads its settings once, at start, from environment variables. A value that does not fit',
    'stops the start with a message naming the variable. Booleans are `true` or `false`; durations are in',
    'milliseconds (`_MS`) or seconds (`_S`).',
    '',
    '```sh',
    'PORT=8080 DATABASE_URL=postgres://user:password@db/wa npm start',
    '```',
    '',
  ];
  for (const group of GROUPS) {
    lines.push(`## ${group.title}`, '');
    if (group.intro) lines.push(group.intro, '');
    lines.push('| variable | default | accepts | meaning |', '| --- | --- | --- | --- |');
    for (const name of group.names) {
      const schema = shape[name] as z.ZodType;
      const { inner, fallback } = unwrap(schema);
      const description = schema.description;
      if (!description) throw new Error(`scripts/config-doc.ts: ${name} has no .describe() in src/runtime/settings.ts`);
      lines.push(`| ${code(name)} | ${readable(name, fallback)} | ${cell(accepts(inner))} | ${cell(description)} |`);
    }
    lines.push('');
  }
  lines.push(
    '## `npm run sandbox`',
    '',
    'The standalone sandbox network (`npm run sandbox`, see [sandbox.md](sandbox.md)) is started apart from the',
    'service and reads its own variables:',
    '',
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...STANDALONE_SANDBOX.map(
      (v) => `| ${code(v.name)} | ${v.default.startsWith('unset') ? v.default : code(v.default)} | ${cell(v.description)} |`,
    ),
    '',
    '## Other variables',
    '',
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...OTHER.map((v) => `| ${code(v.name)} | ${v.default === 'unset' ? v.default : code(v.default)} | ${cell(v.description)} |`),
    '',
    'The benchmarks and the soak read their own options; see [benchmarks.md](benchmarks.md).',
    '',
  );
  return lines.join('\n');
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = configurationPage();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(PAGE, 'utf8');
    } catch {}
    if (committed !== page) {
      console.error('docs/configuration.md is stale: run npm run docs');
      process.exit(1);
    }
  } else {
    writeFileSync(PAGE, page);
    console.log('wrote docs/configuration.md');
  }
}
