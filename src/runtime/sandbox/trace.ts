import { binaryNodeToString } from 'baileys';
import type { BinaryNode } from 'baileys';

export interface TraceEntry {
  at: string;
  direction: 'in' | 'out';
  jid?: string;
  stanza: string;
}

/** A bounded log of stanzas, off unless switched on (tests and users debugging a client). */
export class Trace {
  enabled = false;
  private readonly entries: TraceEntry[] = [];

  constructor(private readonly limit = 5_000) {}

  record(direction: 'in' | 'out', jid: string | undefined, node: BinaryNode): void {
    if (!this.enabled) return;
    this.entries.push({ at: new Date().toISOString(), direction, jid, stanza: binaryNodeToString(node) });
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  read(): TraceEntry[] {
    return [...this.entries];
  }

  clear(): void {
    this.entries.length = 0;
  }
}
