import type { Logger } from 'pino';

const METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
// A frame inside the libsignal package, as V8 prints it on every platform.
const FROM_LIBSIGNAL = /[\\/]node_modules[\\/]libsignal[\\/]/;

let target: Logger | null = null;

/**
 * libsignal writes to the console itself, Signal session state (keys included) among it ("Closing
 * session: ..."). Its calls go to the logger at debug level with only their leading text; the objects
 * they carry are dropped, so no key material reaches a log. Console calls from anywhere else pass
 * through unchanged. The console belongs to the thread, so each thread that runs libsignal (the main
 * thread, the network thread) calls this once; a later call only changes the logger.
 */
export const routeLibsignalConsole = (logger: Logger): void => {
  const installed = target !== null;
  target = logger;
  if (installed) return;
  for (const method of METHODS) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const stack = new Error().stack ?? '';
      // The first line is the message, the next frame this function; the caller is the one after.
      const caller = stack.split('\n')[2] ?? '';
      if (!FROM_LIBSIGNAL.test(caller)) {
        original(...args);
        return;
      }
      const text = typeof args[0] === 'string' ? args[0] : '(no text)';
      target?.debug({ source: 'libsignal', consoleMethod: method }, text);
    };
  }
};
