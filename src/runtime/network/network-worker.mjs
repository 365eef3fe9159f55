// The network thread's entry: plain JavaScript, so the thread needs no loader from its parent (tests,
// tsx, plain node); it registers tsx for itself and loads the TypeScript module.
import { register } from 'tsx/esm/api';

register();
// tsx turns on source-mapped stack traces; Baileys reads `new Error().stack` for every stanza it sends
// (to label timeouts), and mapping those frames cost a tenth of this thread's time. Stacks here point
// at the transpiled code instead.
process.setSourceMapsEnabled(false);
// Baileys also builds and formats `new Error().stack` two or three times per stanza (for timeouts and
// cancellations it almost never reports); at Node's ten frames that was a sixth of this thread's
// time. Errors logged from this thread keep their three innermost frames.
Error.stackTraceLimit = 3;
await import('./network-worker.ts');
