import '../src/runtime/node-version.ts';
import { parseArgs } from 'node:util';
import type { DbKind } from '../test/helpers/app.ts';
import { formatSoakReport, runSoak } from '../test/helpers/soak.ts';

// `npm run soak` (10 minutes through the service on SQLite), or e.g.
// `npm run soak -- --minutes 1 --device-list-ttl 20 --mode bare --db postgres`. Loopback only: the
// sandbox network runs in a process of its own (`--sandbox inline`: in this one, as the bare mode always
// does); the service runs in this process beside the load. The run stops by itself after its time or
// message count.
process.setSourceMapsEnabled(false);
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: 'string', default: 'service' },
    db: { type: 'string', default: 'sqlite' },
    minutes: { type: 'string', default: '10' },
    'send-rate': { type: 'string', default: '20' },
    'phone-rate': { type: 'string', default: '10' },
    'device-list-ttl': { type: 'string', default: '300' },
    'max-messages': { type: 'string', default: '100000' },
    'settle-seconds': { type: 'string', default: '30' },
    'network-mode': { type: 'string', default: 'thread' },
    'network-thread': { type: 'string' },
    'memory-saver': { type: 'string', default: 'false' },
    sandbox: { type: 'string', default: 'process' },
  },
});
// `npm run soak -- cluster`: three nodes on PostgreSQL under faults (bench/cluster-soak.ts), for
// SOAK_MINUTES (default 10) or --minutes.
if (positionals[0] === 'cluster') {
  const { formatClusterSoak, runClusterSoak } = await import('./cluster-soak.ts');
  const minutes = Number(process.env.SOAK_MINUTES ?? (process.argv.includes('--minutes') ? values.minutes : 10));
  const report = await runClusterSoak({
    durationMs: minutes * 60_000,
    sessions: Number(process.env.SOAK_SESSIONS ?? 6),
    everyMs: 1_000,
    drainMs: 90_000,
    log: (line) => process.stdout.write(`${line}\n`),
    logDir: process.env.SOAK_LOG_DIR ?? `/tmp/cluster-soak-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  });
  process.stdout.write(`${formatClusterSoak(report)}\n`);
  process.exit(report.broken.length === 0 ? 0 : 1);
}
const networkModeOf = (value: string | undefined): 'process' | 'thread' | 'inline' =>
  value === 'process' || value === 'inline' ? value : 'thread';
const mode = values.mode === 'bare' ? 'bare' : 'service';
const db: DbKind = values.db === 'postgres' ? 'postgres' : 'sqlite';
const report = await runSoak({
  mode,
  db,
  durationMs: Number(values.minutes) * 60_000,
  sendRate: Number(values['send-rate']),
  phoneRate: Number(values['phone-rate']),
  deviceListTtlMs: Number(values['device-list-ttl']) * 1000,
  maxMessages: Number(values['max-messages']),
  drainMs: 30_000,
  // --network-thread false: the older name of --network-mode inline
  networkMode: values['network-thread'] === 'false' ? 'inline' : networkModeOf(values['network-mode']),
  memorySaver: values['memory-saver'] === 'true',
  sandbox: values.sandbox === 'inline' ? 'inline' : 'process',
  settleMs: Number(values['settle-seconds']) * 1000,
  log: (line) => process.stdout.write(`${line}\n`),
});
process.stdout.write(`${formatSoakReport(report)}\n`);
process.exit(report.out.lost + report.in.lost + report.out.duplicated + report.in.duplicated === 0 ? 0 : 1);
