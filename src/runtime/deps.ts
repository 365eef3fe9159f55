import type { UserFacingSocketConfig } from 'baileys';
import type { Logger } from 'pino';
import type { Deps } from '../resolvers/context.ts';
import type { Db } from './db/client.ts';
import { createEventBus } from './events.ts';
import { createBaileysNetwork } from './network/baileys-network.ts';
import { SessionManager } from './network/session-manager.ts';
import type { SessionManagerOptions } from './network/session-manager.ts';
import type { Settings } from './settings.ts';

export interface DepsOptions {
  db: Db;
  logger: Logger;
  settings: Settings;
  /** Socket options for every link, e.g. the sandbox network's URL and media agent. */
  socket?: Partial<UserFacingSocketConfig>;
  keepAliveIntervalMs?: number;
  sessionTuning?: Pick<SessionManagerOptions, 'staleAfterMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'lastSeenWriteEveryMs'>;
  now?: () => Date;
}

/** The one place the runtime pieces are put together, for main and for tests alike. */
export const createDeps = (options: DepsOptions): Deps => {
  const { db, logger, settings } = options;
  const events = createEventBus();
  const network = createBaileysNetwork({ db, logger, socket: options.socket, keepAliveIntervalMs: options.keepAliveIntervalMs });
  const sessions = new SessionManager({ db, logger, network, events, ...options.sessionTuning });
  return { db, logger, settings, now: options.now ?? (() => new Date()), sessions, events };
};
