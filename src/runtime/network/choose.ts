import type { Logger } from 'pino';
import { connectToSandbox, sandboxAddress, startSandbox } from '../sandbox/sandbox.ts';
import type { NetworkTarget } from './baileys-target.ts';
import type { Settings } from '../settings.ts';

export interface NetworkChoice {
  target: NetworkTarget;
  close: () => Promise<void>;
}

/** WhatsApp itself by default; the sandbox network when WA_SANDBOX_URL or SANDBOX_EMBEDDED says so. */
export const networkOptions = async (settings: Settings, logger: Logger): Promise<NetworkChoice> => {
  if (settings.SANDBOX_EMBEDDED) {
    const sandbox = await startSandbox({ logger: logger.child({ module: 'sandbox' }), controlPort: settings.SANDBOX_CONTROL_PORT });
    logger.info({ wsUrl: sandbox.wsUrl, controlUrl: sandbox.controlUrl }, 'embedded sandbox network started (offline demo)');
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
