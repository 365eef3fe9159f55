import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/logger.ts';

/** An output that keeps what is written, a terminal or not. */
const output = (isTTY: boolean) => {
  const written: string[] = [];
  return { written, out: { isTTY, write: (line: string) => written.push(line) } };
};

describe('the service log', () => {
  it('writes one readable line per entry to a terminal: time, level, message, then the fields, the API key redacted', () => {
    const { written, out } = output(true);
    const logger = createLogger('info', { out });
    logger.child({ sessionId: 's1' }).info({ status: 'CONNECTED', apiKey: 'secret' }, 'session connected');
    logger.debug('not at info');
    expect(written).toHaveLength(1);
    const plain = stripVTControlCharacters(written[0] ?? '');
    expect(plain).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: session connected \{"sessionId":"s1","status":"CONNECTED","apiKey":"\[redacted\]"\}\n$/,
    );
    expect(() => JSON.parse(written[0] ?? '')).toThrow();
  });

  it('writes JSON lines when the output is not a terminal (a file, a pipe, a log collector)', () => {
    const { written, out } = output(false);
    createLogger('info', { out }).warn({ sessionId: 's1', apiKey: 'secret' }, 'something odd');
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0] ?? '')).toMatchObject({ level: 40, sessionId: 's1', apiKey: '[redacted]', msg: 'something odd' });
  });

  it('can be told either form whatever the output', () => {
    const toFile = output(false);
    createLogger('info', { out: toFile.out, pretty: true }).info('hello');
    expect(toFile.written[0]).toMatch(/^\[[\d:.]+\] INFO: hello\n$/);
    const toTerminal = output(true);
    createLogger('info', { out: toTerminal.out, pretty: false }).info('hello');
    expect(JSON.parse(toTerminal.written[0] ?? '')).toMatchObject({ level: 30, msg: 'hello' });
  });
});
