/** What `npm run demo` (SANDBOX_EMBEDDED=true) tells its user at start, beside the sandbox's control address. */
export interface DemoFacts {
  /** The accounts there were before this start (so no key was printed), with the first emails; null when none. */
  existingAccounts: { count: number; first: string[] } | null;
  /** Whether webhook URLs may point at private addresses, and whether that is the demo's default rather than set. */
  webhooks: PrivateUrls;
  /** The same for media URLs (MEDIA_ALLOW_PRIVATE). */
  media: PrivateUrls;
}

export interface PrivateUrls {
  allowed: boolean;
  byDemo: boolean;
}

export const SHOWN_ACCOUNTS = 3;

const urlRule = (what: string, setting: string, { allowed, byDemo }: PrivateUrls): string =>
  allowed
    ? `${what} URLs may point at this machine and the local network (${setting}=true${byDemo ? ", the demo's default" : ''}).`
    : `${what} URLs must point at public addresses (${setting}=false).`;

export const demoNotes = ({ existingAccounts, webhooks, media }: DemoFacts): string => {
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
  lines.push(urlRule('Webhook', 'WEBHOOK_ALLOW_PRIVATE', webhooks), urlRule('Media', 'MEDIA_ALLOW_PRIVATE', media));
  return `${lines.join('\n')}\n\n`;
};
