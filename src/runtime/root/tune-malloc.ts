// Imported right after node-version.ts by the service's entry point, so that when it starts the process
// again (malloc-tunables.ts) nothing else has loaded yet.
import { restartWithMallocTunables } from './malloc-tunables.ts';

restartWithMallocTunables();
