import '../../node-version.ts';
import { parseArgs } from 'node:util';
import { createAccount, rotateApiKey } from '../../../resolvers/accounts.ts';
import { DomainError } from '../../../resolvers/errors.ts';
import { createPrisma } from '../../db/client.ts';
import { applyMigrations } from '../../db/migrate.ts';
import { loadSettings } from '../../settings.ts';

const usage = `Usage:
  npm run account -- create --email you@example.com   create an account and print its API key once
  npm run account -- rotate --email you@example.com   replace the account's API key and print the new one
  npm run account -- list                             list accounts (keys are never shown)
DATABASE_URL selects the database, as for the service.`;

const { positionals, values } = parseArgs({ allowPositionals: true, options: { email: { type: 'string' } } });
const [command] = positionals;
const settings = loadSettings();
await applyMigrations(settings.DATABASE_URL);
const db = await createPrisma(settings.DATABASE_URL);

try {
  if (command === 'create') {
    const account = await createAccount({ db }, { email: values.email });
    console.log(`Created account ${account.id} (${account.email})\nAPI key: ${account.apiKey}`);
  } else if (command === 'rotate') {
    const account = await rotateApiKey({ db }, { email: values.email });
    console.log(`New API key for ${account.email}: ${account.apiKey}\nThe old key no longer works.`);
  } else if (command === 'list') {
    for (const a of await db.account.findMany({ orderBy: { createdAt: 'asc' } })) {
      console.log(`${a.id}  ${a.email}  created ${a.createdAt.toISOString()}`);
    }
  } else {
    console.error(usage);
    process.exitCode = 2;
  }
} catch (err) {
  if (!(err instanceof DomainError)) throw err;
  console.error(`${err.code}: ${err.message}${err.details ? ` (${err.details.map((d) => `${d.path}: ${d.message}`).join('; ')})` : ''}`);
  process.exitCode = 1;
} finally {
  await db.$disconnect();
}
process.exit();
