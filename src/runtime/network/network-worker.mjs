// The network thread's entry: plain JavaScript, so the thread needs no loader from its parent (tests,
// tsx, plain node); it registers tsx for itself and loads the TypeScript module.
import { register } from 'tsx/esm/api';

register();
await import('./network-worker.ts');
