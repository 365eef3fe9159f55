import { DisconnectReason } from 'baileys';
import type { UserFacingSocketConfig } from 'baileys';
import type { Logger } from 'pino';

export type BaileysLogger = NonNullable<UserFacingSocketConfig['logger']>;

/** A line Baileys logs in normal operation: the level it deserves here, and what it means, in one line. */
interface Expected {
  matches: (msg: string, fields: Record<string, unknown>) => boolean;
  level: 'info' | 'debug';
  explanation: string;
}

const streamErrorCode = (fields: Record<string, unknown>): unknown =>
  (fields.fullErrorNode as { attrs?: { code?: unknown } } | undefined)?.attrs?.code;

/** The error Baileys' socket throws for whatever was under way when the link closed. */
const isConnectionClosed = (error: unknown): boolean => {
  const boom = error as { isBoom?: unknown; output?: { statusCode?: unknown } } | null;
  return typeof boom === 'object' && boom !== null && boom.isBoom === true && boom.output?.statusCode === DisconnectReason.connectionClosed;
};

/** Baileys' `Invalid LID-PN mapping: <lid>, <pn>` where the "number" is the same LID again. */
const LID_AS_ITS_OWN_NUMBER = /^Invalid LID-PN mapping: ([^\s,:@]+)(?::\d+)?@lid, ([^\s,:@]+)(?::\d+)?@lid$/;

const EXPECTED: Expected[] = [
  {
    // Baileys logs every stream error at error level, including the one WhatsApp sends after each pairing;
    // the session manager says at info that it reconnects.
    matches: (msg, fields) => msg === 'stream errored out' && streamErrorCode(fields) === '515',
    level: 'debug',
    explanation: 'stream error 515: the network asks for a new connection, as it does after each pairing',
  },
  {
    // Closing a link (asked for, or the connection lost) fails what was under way on it: a received
    // message's receipt or the app state sync a history notification starts. The session manager says
    // at info that the link closed; a message not receipted is delivered again on the next connection.
    matches: (_msg, fields) => [fields.error, fields.err, fields.ackErr].some(isConnectionClosed),
    level: 'debug',
    explanation: 'the link closed while this was under way; a received message not yet receipted comes again on the next connection',
  },
  {
    matches: (msg) => msg.includes('DISABLING ALL SYNC'),
    level: 'debug',
    explanation: 'history sync is off on the sandbox network, which sends no history; LIDs are learnt from usync answers and messages',
  },
  {
    // A send into a group (or to a chat addressed by LID) asks the network for the devices of users it
    // knows by LID, with the LID protocol; the answer names each user's LID, which is the address asked,
    // and Baileys offers the pair (LID, address asked) to its mapping store, which refuses it: no number.
    matches: (msg) => {
      const pair = LID_AS_ITS_OWN_NUMBER.exec(msg);
      return pair !== null && pair[1] === pair[2];
    },
    level: 'debug',
    explanation: "a device list asked by LID (a group's members on a send) names that same LID: no LID-number pair to keep, nothing lost",
  },
  {
    matches: (msg) => msg.startsWith('no name present, ignoring presence update request'),
    level: 'debug',
    explanation: 'no presence sent at connection: the account has no display name yet (a freshly linked one)',
  },
];

type Method = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/**
 * The logger a Baileys socket writes to: Baileys' own lines at `chatty`'s level (warn and above unless
 * tracing), except the lines it logs as warnings or errors in normal operation, which go to `log` at
 * info or debug with an explanation and Baileys' own message beside it.
 */
export const baileysLogger = (log: Logger, chatty: Logger): BaileysLogger => {
  const write =
    (method: Method) =>
    (obj: unknown, msg?: string): void => {
      // Baileys writes both logger.warn('text') and logger.error({ fields }, 'text').
      const text = typeof obj === 'string' && msg === undefined ? obj : (msg ?? '');
      const fields = typeof obj === 'object' && obj !== null ? (obj as Record<string, unknown>) : {};
      if (method === 'warn' || method === 'error') {
        const expected = EXPECTED.find((e) => e.matches(text, fields));
        if (expected) {
          log[expected.level]({ ...fields, baileysMessage: text }, expected.explanation);
          return;
        }
      }
      if (msg === undefined) chatty[method](obj);
      else chatty[method](obj, msg);
    };
  return {
    get level() {
      return chatty.level;
    },
    set level(level: string) {
      chatty.level = level;
    },
    child: (bindings) => lazyChild(() => baileysLogger(log.child(bindings), chatty.child(bindings)), chatty),
    trace: write('trace'),
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
};

/**
 * Baileys makes a child logger for every message it builds (`{ msgId }`), and two pino children with
 * their serialized bindings cost more than the rest of the message's logging: the children are made
 * only when a line at an enabled level (or a warning or error, which may be re-levelled) is written.
 */
const lazyChild = (make: () => BaileysLogger, chatty: Logger): BaileysLogger => {
  let made: BaileysLogger | undefined;
  const real = () => {
    made ??= make();
    return made;
  };
  const write =
    (method: Method) =>
    (obj: unknown, msg?: string): void => {
      if (!made && method !== 'warn' && method !== 'error' && !chatty.isLevelEnabled(method)) return;
      real()[method](obj, msg);
    };
  return {
    get level() {
      return made ? made.level : chatty.level;
    },
    set level(level: string) {
      real().level = level;
    },
    child: (bindings) => real().child(bindings),
    trace: write('trace'),
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
};
