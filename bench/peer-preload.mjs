// `bun --preload` for the peer product in `npm run bench -- peers`: Baileys builds every socket from
// its exported, mutable DEFAULT_CONNECTION_CONFIG and the peer never sets waWebSocketUrl, so pointing
// that default at the sandbox's bartender URL (PEER_SOCKET_URL) links it to the sandbox with no change
// to its code. The peer's own copy of Baileys is resolved from its directory (the working directory),
// so this is the very module instance its code imports.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const socketUrl = process.env.PEER_SOCKET_URL;
if (!socketUrl) throw new Error('peer-preload: PEER_SOCKET_URL (the sandbox bartender socket URL) is not set');
const entry = createRequire(join(process.cwd(), 'package.json')).resolve('@whiskeysockets/baileys');
const { DEFAULT_CONNECTION_CONFIG } = await import(entry);
DEFAULT_CONNECTION_CONFIG.waWebSocketUrl = socketUrl;
