import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { baileysLogger } from '../../src/runtime/network/baileys-logger.ts';

const DANGER =
  '⚠️ DANGER: DISABLING ALL SYNC BY shouldSyncHistoryMsg PREVENTS BAILEYS FROM ACCESSING INITIAL LID MAPPINGS, LEADING TO INSTABILIY AND SESSION ERRORS';

/** A session's logger at `level`, its Baileys logger as baileys-network.ts makes it, and the lines written. */
const setup = (level: string) => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const log = pino({ level }, sink).child({ sessionId: 's1' });
  const chatty = log.child({ module: 'baileys' }, { level: log.isLevelEnabled('warn') ? 'warn' : log.level });
  return { lines, logger: baileysLogger(log.child({ module: 'baileys' }), chatty) };
};

describe("Baileys' log lines", () => {
  it('writes the 515 after pairing, the sync notice and the missing-name notice at debug, each with its explanation', () => {
    const { lines, logger } = setup('debug');
    logger.error({ fullErrorNode: { tag: 'stream:error', attrs: { code: '515' } } }, 'stream errored out');
    logger.warn(DANGER);
    logger.warn('no name present, ignoring presence update request...');
    expect(lines.map((l) => [l.level, l.baileysMessage, l.msg])).toEqual([
      [20, 'stream errored out', expect.stringContaining('as it does after each pairing')],
      [20, DANGER, expect.stringContaining('the sandbox network, which sends no history')],
      [20, 'no name present, ignoring presence update request...', expect.stringContaining('no display name yet')],
    ]);
    expect(lines[0]).toMatchObject({ sessionId: 's1', module: 'baileys', fullErrorNode: { attrs: { code: '515' } } });
  });

  it('says nothing of them at info, and keeps every other stream error and warning at its own level', () => {
    const { lines, logger } = setup('info');
    logger.error({ fullErrorNode: { tag: 'stream:error', attrs: { code: '515' } } }, 'stream errored out');
    logger.warn(DANGER);
    expect(lines).toEqual([]);
    logger.error({ fullErrorNode: { tag: 'stream:error', attrs: { code: '503' } } }, 'stream errored out');
    logger.warn('something else');
    logger.info('chatter');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'stream errored out'],
      [40, 'something else'],
    ]);
  });

  it("writes the refused LID-LID pair of a send into a group at debug, and keeps a real bad pair Baileys' warning", () => {
    const { lines, logger } = setup('debug');
    // as lid-mapping.js words it for each member of a group asked by LID
    logger.child({ class: 'lid' }).warn('Invalid LID-PN mapping: 100000488178@lid, 100000488178@lid');
    expect(lines.map((l) => [l.level, l.baileysMessage, l.msg])).toEqual([
      [20, 'Invalid LID-PN mapping: 100000488178@lid, 100000488178@lid', expect.stringContaining('names that same LID')],
    ]);
    const quiet = setup('info');
    quiet.logger.warn('Invalid LID-PN mapping: 100000488178@lid, 100000488178@lid');
    expect(quiet.lines).toEqual([]);
    // two different LIDs, or a malformed number, are not the send's echo: Baileys' own warning stays
    quiet.logger.warn('Invalid LID-PN mapping: 100000488178@lid, 100000488179@lid');
    quiet.logger.warn('Invalid LID-PN mapping: 100000488178@lid, 12@broadcast');
    expect(quiet.lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'Invalid LID-PN mapping: 100000488178@lid, 100000488179@lid'],
      [40, 'Invalid LID-PN mapping: 100000488178@lid, 12@broadcast'],
    ]);
  });

  it('writes what failed because the link closed at debug, and keeps every other failure at error', () => {
    // the shape of Baileys' Boom when a receipt or query meets a closed socket (socket.js' sendRawMessage)
    const boom = (statusCode: number, message: string) =>
      Object.assign(new Error(message), { isBoom: true, output: { statusCode, payload: { statusCode, message }, headers: {} } });
    const closed = boom(428, 'Connection Closed');
    const node = "<message from='100000454934@lid' id='3EB0A94B58E1D9E02D33' category='peer'/>";
    const { lines, logger } = setup('debug');
    logger.error({ error: closed }, 'transaction failed, rolling back');
    logger.error({ error: closed, node }, 'error in handling message');
    logger.error({ err: closed }, 'Failed to send retry');
    expect(lines.map((l) => [l.level, l.baileysMessage, l.msg])).toEqual([
      [20, 'transaction failed, rolling back', expect.stringContaining('the link closed while this was under way')],
      [20, 'error in handling message', expect.stringContaining('comes again on the next connection')],
      [20, 'Failed to send retry', expect.stringContaining('the link closed while this was under way')],
    ]);
    const quiet = setup('info');
    quiet.logger.error({ error: closed, node }, 'error in handling message');
    expect(quiet.lines).toEqual([]);
    quiet.logger.error({ error: boom(500, 'Internal Server Error'), node }, 'error in handling message');
    quiet.logger.error({ error: new Error('Connection Closed') }, 'transaction failed, rolling back');
    expect(quiet.lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'error in handling message'],
      [50, 'transaction failed, rolling back'],
    ]);
  });

  it("keeps Baileys' children rewriting, and its level readable and settable", () => {
    const { lines, logger } = setup('debug');
    const child = logger.child({ class: 'ns' });
    child.warn(DANGER);
    expect(lines).toEqual([expect.objectContaining({ level: 20, class: 'ns', baileysMessage: DANGER })]);
    expect(logger.level).toBe('warn');
    logger.level = 'error';
    logger.warn('dropped');
    expect(lines).toHaveLength(1);
  });

  it("makes a child's loggers only when it writes a line that can appear, with the child's bindings", () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const log = pino({ level: 'info' }, sink);
    const chatty = log.child({ module: 'baileys' }, { level: 'warn' });
    const made = vi.spyOn(chatty, 'child');
    const logger = baileysLogger(log, chatty);
    const perMessage = logger.child({ msgId: 'm1' });
    perMessage.debug({ x: 1 }, 'building');
    perMessage.info('chatter');
    expect(made).not.toHaveBeenCalled();
    expect(perMessage.level).toBe('warn');
    perMessage.warn('something odd');
    expect(made).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([expect.objectContaining({ level: 40, msgId: 'm1', module: 'baileys', msg: 'something odd' })]);
    chatty.level = 'trace';
    const traced = logger.child({ msgId: 'm2' });
    traced.trace('frame');
    expect(lines.at(-1)).toMatchObject({ level: 10, msgId: 'm2', msg: 'frame' });
  });
});
