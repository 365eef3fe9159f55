import { describe, expect, it } from 'vitest';
import { demoNotes } from '../../src/runtime/root/demo.ts';
import { loadSettings } from '../../src/runtime/settings.ts';

describe('npm run demo: what it says at start, and its webhook default', () => {
  it('tells how to get a key when the accounts existed before, naming the first for a rotation', () => {
    const notes = demoNotes({
      existingAccounts: { count: 2, first: ['admin@example.com', 'b@example.com'] },
      webhookAllowPrivate: true,
      webhookAllowPrivateByDemo: true,
    });
    expect(notes).toContain('No API key printed: accounts exist already (admin@example.com, b@example.com)');
    expect(notes).toContain('npm run account -- create --email you@example.com');
    expect(notes).toContain('npm run account -- rotate --email admin@example.com');
    expect(notes).toContain(
      "Webhook URLs may point at this machine and the local network (WEBHOOK_ALLOW_PRIVATE=true, the demo's default).",
    );
  });

  it('says nothing of keys when this start printed one, and names the webhook setting as it is', () => {
    expect(demoNotes({ existingAccounts: null, webhookAllowPrivate: true, webhookAllowPrivateByDemo: false })).toBe(
      'Webhook URLs may point at this machine and the local network (WEBHOOK_ALLOW_PRIVATE=true).\n\n',
    );
    expect(demoNotes({ existingAccounts: null, webhookAllowPrivate: false, webhookAllowPrivateByDemo: false })).toBe(
      'Webhook URLs must point at public addresses (WEBHOOK_ALLOW_PRIVATE=false).\n\n',
    );
  });

  it('shows three accounts at most', () => {
    const first = ['a', 'b', 'c'].map((n) => `${n}@example.com`);
    expect(demoNotes({ existingAccounts: { count: 5, first }, webhookAllowPrivate: true, webhookAllowPrivateByDemo: true })).toContain(
      '(a@example.com, b@example.com, c@example.com and 2 more)',
    );
  });

  it('allows private webhook URLs by default in the demo only, and never against an explicit setting', () => {
    expect(loadSettings({}).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true' }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true', WEBHOOK_ALLOW_PRIVATE: 'false' }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadSettings({ WEBHOOK_ALLOW_PRIVATE: 'true' }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
  });
});
