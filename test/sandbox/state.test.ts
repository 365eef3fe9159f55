import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/runtime/sandbox/sandbox.ts';

describe('sandbox state file: hidden numbers, required tokens and issued tokens survive a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps them with the phones', async () => {
    const stateFile = join(dir, 'sandbox.json');
    const first = await startSandbox({ stateFile });
    first.control.addPhone('15553330001', 'Ann');
    first.control.addPhone('15553330002', 'Ben');
    first.control.hideNumber('15553330001');
    first.control.requireToken('15553330002');
    await first.control.sendText('15553330001', '15553330002', 'hello');
    const before = first.control.phones();
    await first.close();

    const second = await startSandbox({ stateFile, addressing: 'pn' });
    try {
      expect(second.control.phones()).toEqual(before);
      expect(second.control.phone('15553330001')).toMatchObject({ hideNumber: true, requireToken: false, tokensIssuedTo: ['15553330002'] });
      expect(second.control.phone('15553330002')).toMatchObject({ hideNumber: false, requireToken: true, tokensIssuedTo: [] });
    } finally {
      await second.close();
    }
  });
});
