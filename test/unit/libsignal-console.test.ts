import { Writable } from 'node:stream';
import { SessionRecord } from 'libsignal';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { routeLibsignalConsole } from '../../src/runtime/libsignal-console.ts';

describe("libsignal's console output", () => {
  it('goes to the logger at debug level with its text only, never the session state it prints', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      }),
    );
    const printed: unknown[][] = [];
    const before = { info: console.info, warn: console.warn };
    console.info = (...args: unknown[]) => printed.push(args);
    console.warn = (...args: unknown[]) => printed.push(args);
    try {
      routeLibsignalConsole(logger);
      const secret = 'c2VjcmV0LWtleS1tYXRlcmlhbA==';
      const session = { indexInfo: { closed: -1, baseKey: secret }, currentRatchet: { rootKey: secret } };
      // closeSession is libsignal's own, untyped: it prints the whole session ("Closing session: ...").
      (new SessionRecord() as unknown as { closeSession: (s: unknown) => void }).closeSession(session);
      console.info('the service itself');
      expect(printed).toEqual([['the service itself']]);
      expect(lines).toEqual([expect.objectContaining({ level: 20, source: 'libsignal', msg: 'Closing session:' })]);
      expect(JSON.stringify(lines)).not.toContain(secret);
    } finally {
      Object.assign(console, before);
    }
  });
});
