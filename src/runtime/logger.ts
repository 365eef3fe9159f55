import { pino } from 'pino';
import type { Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type { Logger };

/** Where log lines go: stdout by default; `isTTY` says a person is reading it. */
export interface LogOutput {
  write(line: string): unknown;
  isTTY?: boolean;
}

export interface LoggerOptions {
  /** default: process.stdout */
  out?: LogOutput;
  /** one human-readable line per entry instead of JSON; default: whether `out` is a terminal */
  pretty?: boolean;
}

/**
 * The service's pino logger: JSON lines for log collectors, or, when a person reads the output in a
 * terminal, one readable line per entry (time, level, message, then the fields), coloured. The
 * formatting runs in this thread, synchronously, so the order and the last lines before an exit are
 * the same in both forms.
 */
export const createLogger = (level: string, options: LoggerOptions = {}): Logger => {
  const out = options.out ?? process.stdout;
  const settings = { level, redact: { paths: ['req.headers["x-api-key"]', 'apiKey'], censor: '[redacted]' } };
  if (!(options.pretty ?? out.isTTY === true)) return options.out ? pino(settings, options.out) : pino(settings);
  const format = prettyFactory({
    colorize: out.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  return pino(settings, { write: (line: string) => out.write(format(line)) });
};
