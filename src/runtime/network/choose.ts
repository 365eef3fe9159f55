import type { UserFacingSocketConfig } from 'baileys';
import type { Logger } from 'pino';
import { connectToSandbox, sandboxSocketOptions, startSandbox, trustSandbox } from '../sandbox/sandbox.ts';
import type { Settings } from '../settings.ts';

export interface NetworkChoice {
  socket?: Partial<UserFacingSocketConfig>;
  close: () => Promise<void>;
}

/** WhatsApp itself by default; the sandbox network when WA_SANDBOX_URL or SANDBOX_EMBEDDED says so. */
export const networkOptions = async (settings: Settings, logger: Logger): Promise<NetworkChoice> => {
  if (settings.SANDBOX_EMBEDDED) {
    const sandbox = await startSandbox({ logger: logger.child({ module: 'sandbox' }), controlPort: settings.SANDBOX_CONTROL_PORT });
    trustSandbox(sandbox.rootPublicKey);
    logger.info({ wsUrl: sandbox.wsUrl, controlUrl: sandbox.controlUrl }, 'embedded sandbox network started (offline demo)');
    process.stdout.write(`\nEmbedded sandbox network: control API at ${sandbox.controlUrl}\n\n`);
    return { socket: sandboxSocketOptions(sandbox), close: () => sandbox.close() };
  }
  if (settings.WA_SANDBOX_URL) {
    const socket = await connectToSandbox(settings.WA_SANDBOX_URL);
    logger.info({ sandbox: settings.WA_SANDBOX_URL }, 'using the sandbox network');
    return { socket, close: async () => undefined };
  }
  return { close: async () => undefined };
};
