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
const { values } = parseArgs({
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
