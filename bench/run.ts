import '../src/runtime/node-version.ts';
import { cpus } from 'node:os';
import { benchContacts, printContactBench } from './contacts.ts';
import { benchFailover, printFailoverBench } from './failover.ts';
import { benchMemory, printMemoryBench } from './memory.ts';
import { benchMessages, printMessageBench } from './messages.ts';
import { benchPacing, printPacingBenches } from './pacing.ts';
import { benchPeers, printPeersBench } from './peers.ts';
import { benchFloor, printFloorBench } from './runtime-floor.ts';
import { benchScheduling, printSchedulingBench } from './scheduling.ts';
import { benchScale, printScaleBench } from './scale.ts';
import { benchSessions, printSessionBench } from './sessions.ts';
import { benchStore, printStoreBench } from './store.ts';
import { benchSinks, printSinksBench } from './sinks.ts';
import { benchWebhooks, printWebhookBench } from './webhooks.ts';
import type { DbKind } from '../test/helpers/app.ts';
import { dbKinds } from '../test/helpers/app.ts';

// `npm run bench` (all but scale) or `npm run bench -- contacts` (one group).
// As in the service's network thread: no source-mapped stack traces (tsx turns them on), which Baileys
// would pay for on every stanza, so Baileys' own rate below is not held back by them either.
process.setSourceMapsEnabled(false);
// Figures depend on the Node.js that ran them (on Node 20 Baileys' async hooks cost several times the idle CPU): every run says which.
console.log(`bench: Node.js ${process.version} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'})`);
const only = process.argv.slice(2);
const wants = (name: string) => only.length === 0 || only.includes(name);

if (wants('contacts')) {
  for (const kind of dbKinds as DbKind[]) printContactBench(await benchContacts(kind));
}
if (wants('sessions')) printSessionBench(await benchSessions());
if (wants('messages')) printMessageBench(await benchMessages());
if (wants('scheduling')) printSchedulingBench(await benchScheduling());
if (wants('webhooks')) printWebhookBench(await benchWebhooks());
// The message store (issue 45): CPU with it on and off, pages, history sync, bytes per message.
if (wants('store')) {
  for (const kind of dbKinds as DbKind[]) printStoreBench(await benchStore(kind));
}
// Into the machine's RabbitMQ and NATS (docs/sinks.md): only when named.
if (only.includes('sinks')) printSinksBench(await benchSinks());
// Minutes at its default 2,000 sessions: only when named.
if (only.includes('scale')) printScaleBench(await benchScale());
// Beside the peer product fazer-ai/baileys-api (PEER_DIR, see docs/benchmarks-peers.md): only when named.
if (only.includes('peers')) {
  // A failure here is most often the setup's (PEER_DIR, Redis, the peer's start): its message alone,
  // not the compiled line Node prints beside an uncaught error.
  const result = await benchPeers().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
  printPeersBench(result);
}
// Issue 48's load on one session, ours before and after beside the peer (PEER_DIR): only when named.
if (only.includes('memory')) {
  const result = await benchMemory().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
  printMemoryBench(result);
}
// The send pacer idle beside SEND_PACING=off (issue 35): only when named.
if (only.includes('pacing')) {
  const result = await benchPacing().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
  printPacingBenches(result);
}
// Several nodes on PostgreSQL and Redis (issue 34): only when named.
if (only.includes('failover')) printFailoverBench(await benchFailover());
// The runtime alone (Node.js against Bun, one bare socket each; Bun from PEER_DIR): only when named.
if (only.includes('floor')) {
  const result = await benchFloor().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
  printFloorBench(result);
}
process.exit(0);
