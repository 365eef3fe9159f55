// The network worker's entry when the service runs from TypeScript sources (tests, `npm run dev`): plain
// JavaScript, so the network process (or thread) needs no loader from its parent; it registers tsx for
// itself and loads the TypeScript module. The compiled build starts dist/runtime/network/network-worker.js directly.
import { register } from 'tsx/esm/api';

register();
// tsx turns on source-mapped stack traces; Baileys reads `new Error().stack` for every stanza it sends
// (to label timeouts), and mapping those frames cost a tenth of the worker's time. Stacks here point
// at the transpiled code instead.
process.setSourceMapsEnabled(false);
await import('./network-worker.ts');
