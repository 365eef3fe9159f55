// Entry of the bare socket's thread (see bare-socket.ts): plain JavaScript that registers tsx for
// itself, as the service's network thread does, with the same stack settings.
import { register } from 'tsx/esm/api';

register();
process.setSourceMapsEnabled(false);
Error.stackTraceLimit = 3;
await import('./bare-socket.ts');
