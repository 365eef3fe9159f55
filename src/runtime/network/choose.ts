import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { connectToSandbox } from '../sandbox/address.ts';
import type { NetworkTarget } from './baileys-target.ts';
import type { Settings } from '../settings.ts';

export interface NetworkChoice {
  target: NetworkTarget;
  close: () => Promise<void>;
}

/** The embedded sandbox's state file: as set, else beside a SQLite database, else in ./data. */
export const sandboxStateFile = (settings: Pick<Settings, 'SANDBOX_STATE_FILE' | 'DATABASE_URL'>): string => {
  if (settings.SANDBOX_STATE_FILE) return settings.SANDBOX_STATE_FILE;
  const sqlite = settings.DATABASE_URL.startsWith('file:') ? settings.DATABASE_URL.slice('file:'.length).split('?')[0] : undefined;
  return join(sqlite ? dirname(sqlite) : './data', 'sandbox.json');
};

/** WhatsApp itself by default; the sandbox network when WA_SANDBOX_URL or SANDBOX_EMBEDDED says so. */
export const networkOptions = async (settings: Settings, logger: Logger): Promise<NetworkChoice> => {
  if (settings.SANDBOX_EMBEDDED) {
    const stateFile = sandboxStateFile(settings);
    // Loaded only here: the sandbox (and the Baileys it builds on) is tens of MB a service pointed at
    // WhatsApp, or at a sandbox in another process, never needs.
    const { sandboxAddress, startSandbox } = await import('../sandbox/sandbox.ts');
    const sandbox = await startSandbox({
      logger: logger.child({ module: 'sandbox' }),
      controlPort: settings.SANDBOX_CONTROL_PORT,
      stateFile,
      addressing: settings.SANDBOX_ADDRESSING,
    });
    logger.info({ wsUrl: sandbox.wsUrl, controlUrl: sandbox.controlUrl, stateFile }, 'embedded sandbox network started (offline demo)');
    process.stdout.write(`\nEmbedded sandbox network: control API at ${sandbox.controlUrl}\n\n`);
    return { target: { sandbox: sandboxAddress(sandbox) }, close: () => sandbox.close() };
  }
  if (settings.WA_SANDBOX_URL) {
    const sandbox = await connectToSandbox(settings.WA_SANDBOX_URL);
    logger.info({ sandbox: settings.WA_SANDBOX_URL }, 'using the sandbox network');
    return { target: { sandbox }, close: async () => undefined };
  }
  return { target: {}, close: async () => undefined };
};
