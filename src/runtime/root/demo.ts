/** What `npm run demo` (SANDBOX_EMBEDDED=true) tells its user at start, beside the sandbox's control address. */
export interface DemoFacts {
  /** The accounts there were before this start (so no key was printed), with the first emails; null when none. */
  existingAccounts: { count: number; first: string[] } | null;
  webhookAllowPrivate: boolean;
  /** Whether WEBHOOK_ALLOW_PRIVATE is the demo's default rather than set in the environment. */
  webhookAllowPrivateByDemo: boolean;
}

export const SHOWN_ACCOUNTS = 3;

export const demoNotes = ({ existingAccounts, webhookAllowPrivate, webhookAllowPrivateByDemo }: DemoFacts): string => {
  const lines: string[] = [];
  const first = existingAccounts?.first[0];
  if (existingAccounts !== null && first !== undefined) {
    const shown = existingAccounts.first.slice(0, SHOWN_ACCOUNTS).join(', ');
    const more = existingAccounts.count > SHOWN_ACCOUNTS ? ` and ${existingAccounts.count - SHOWN_ACCOUNTS} more` : '';
    lines.push(
      `No API key printed: accounts exist already (${shown}${more}), and a key is shown only when it is made. For a key, run:`,
      '  npm run account -- create --email you@example.com   (a new account and its key)',
      `  npm run account -- rotate --email ${first}   (a new key for that account; its old key stops working)`,
    );
  }
  lines.push(
    webhookAllowPrivate
      ? `Webhook URLs may point at this machine and the local network (WEBHOOK_ALLOW_PRIVATE=true${webhookAllowPrivateByDemo ? ", the demo's default" : ''}).`
      : 'Webhook URLs must point at public addresses (WEBHOOK_ALLOW_PRIVATE=false).',
  );
  return `${lines.join('\n')}\n\n`;
};
