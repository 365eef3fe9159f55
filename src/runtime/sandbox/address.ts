import type { SandboxAddress } from '../network/baileys-target.ts';

/**
 * For a service in another process: reads the sandbox's address and root key from its control API.
 * A module of its own, so a service pointed at a sandbox does not load the sandbox (or Baileys) to do it.
 */
export const connectToSandbox = async (controlUrl: string): Promise<SandboxAddress> => {
  const res = await fetch(new URL('/info', controlUrl));
  if (!res.ok) throw new Error(`the sandbox at ${controlUrl} answered HTTP ${res.status}`);
  const info = (await res.json()) as { wsUrl: string; rootPublicKey: string; mediaCaPem: string; mediaHost?: string };
  return {
    wsUrl: info.wsUrl,
    mediaCaPem: info.mediaCaPem,
    rootPublicKey: Buffer.from(info.rootPublicKey, 'base64'),
    ...(info.mediaHost ? { mediaHost: info.mediaHost } : {}),
  };
};
