import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { http, startTestApp } from '../test/helpers/app.ts';
import type { DbKind } from '../test/helpers/app.ts';

const IMPORT_RUNS = 10;
const SEARCH_CONTACTS = 100_000;
const SEARCH_RUNS = 300;

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

const FIRST = ['Ana', 'Bruno', 'Chloé', 'Dmitri', 'Eve', 'Farid', 'Greta', 'Hiro', 'Ines', 'João', 'Kemal', 'Lena'];
const LAST = ['Silva', 'Martin', 'Okafor', 'Novak', 'Rossi', 'Tanaka', 'Schmidt', 'Dubois', 'Kowalski', 'Haddad'];

export interface ContactBenchResult {
  kind: DbKind;
  importMedianMs: number;
  importMaxMs: number;
  searchMedianMs: number;
  searchP99Ms: number;
}

/** Times a 500-contact bulk import and `GET /v1/contacts?search=` over 100,000 contacts, through HTTP. */
export const benchContacts = async (kind: DbKind): Promise<ContactBenchResult> => {
  const app = await startTestApp(kind);
  try {
    const { apiKey, id: accountId } = await app.newAccount();

    const importTimes: number[] = [];
    for (let run = 0; run < IMPORT_RUNS; run++) {
      const contacts = Array.from({ length: 500 }, (_, i) => ({
        phone: `1${run}${String(i).padStart(8, '0')}`,
        name: `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]}`,
        tags: ['imported', `batch-${run}`],
        variables: { n: String(i) },
      }));
      const started = performance.now();
      const res = await http(app.baseUrl, 'POST', '/v1/contacts/bulk', { key: apiKey, body: { contacts } });
      importTimes.push(performance.now() - started);
      if (res.body.created !== 500) throw new Error(`import run ${run} created ${res.body.created}`);
    }

    // Seed the rest directly: the import path is measured above, seeding speed is not the point.
    const have = IMPORT_RUNS * 500;
    for (let offset = have; offset < SEARCH_CONTACTS; offset += 5000) {
      const rows = Array.from({ length: Math.min(5000, SEARCH_CONTACTS - offset) }, (_, k) => {
        const i = offset + k;
        const phone = `2${String(i).padStart(10, '0')}`;
        const jid = `${phone}@s.whatsapp.net`;
        const name = `${FIRST[i % FIRST.length]} ${LAST[(i * 7) % LAST.length]} ${i}`;
        const email = `user${i}@example.com`;
        return { id: randomUUID(), accountId, jid, phone, name, email, searchText: [name, jid, phone, email].join('\n').toLowerCase() };
      });
      await app.db.contact.createMany({ data: rows });
    }

    // Planner statistics, as a database that has been running has them (PostgreSQL's autovacuum would
    // otherwise gather them at some moment during the timed searches).
    await app.db.$executeRawUnsafe('ANALYZE');

    // Seeding blocked this process's event loop past the keep-alive window; the first request may
    // meet a connection the server just closed, so warm up once before timing.
    await http(app.baseUrl, 'GET', '/v1/contacts?limit=1', { key: apiKey }).catch(() => undefined);
    const terms = ['tanaka 4242', 'user99999@', '20000012345', 'chloé', 'nobody-matches-this', 'rossi 7'];
    const searchTimes: number[] = [];
    const byTerm = new Map<string, number[]>();
    for (let run = 0; run < SEARCH_RUNS; run++) {
      const term = terms[run % terms.length] ?? '';
      const started = performance.now();
      const res = await http(app.baseUrl, 'GET', `/v1/contacts?search=${encodeURIComponent(term)}`, { key: apiKey });
      searchTimes.push(performance.now() - started);
      byTerm.set(term, [...(byTerm.get(term) ?? []), performance.now() - started]);
      if (res.status !== 200) throw new Error(`search failed: ${res.status}`);
    }
    if (process.env.BENCH_VERBOSE)
      for (const [t, v] of byTerm)
        console.log(
          kind,
          JSON.stringify(t),
          'median',
          quantile(
            [...v].sort((a, b) => a - b),
            0.5,
          ).toFixed(1),
          'max',
          Math.max(...v).toFixed(1),
        );
    importTimes.sort((a, b) => a - b);
    searchTimes.sort((a, b) => a - b);
    return {
      kind,
      importMedianMs: quantile(importTimes, 0.5),
      importMaxMs: importTimes[importTimes.length - 1] ?? NaN,
      searchMedianMs: quantile(searchTimes, 0.5),
      searchP99Ms: quantile(searchTimes, 0.99),
    };
  } finally {
    await app.close();
  }
};

export const printContactBench = (r: ContactBenchResult): void => {
  console.log(
    `contacts/${r.kind}: bulk import of 500 median ${fmt(r.importMedianMs)} (max ${fmt(r.importMaxMs)}, target <= 100 ms); ` +
      `search over ${SEARCH_CONTACTS.toLocaleString('en')} contacts median ${fmt(r.searchMedianMs)}, p99 ${fmt(r.searchP99Ms)} (target p99 <= 20 ms)`,
  );
};
