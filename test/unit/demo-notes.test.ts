import { describe, expect, it } from 'vitest';
import { demoNotes } from '../../src/runtime/root/demo.ts';
import { loadSettings } from '../../src/runtime/settings.ts';

const DEMO = { allowed: true, byDemo: true };
const SET = { allowed: true, byDemo: false };
const REFUSED = { allowed: false, byDemo: false };

describe('npm run demo: what it says at start, and its defaults for webhook and media URLs', () => {
  it('tells how to get a key when the accounts existed before, naming the first for a rotation', () => {
    const notes = demoNotes({
      existingAccounts: { count: 2, first: ['admin@example.com', 'b@example.com'] },
      webhooks: DEMO,
      media: DEMO,
    });
    expect(notes).toContain('No API key printed: accounts exist already (admin@example.com, b@example.com)');
    expect(notes).toContain('npm run account -- create --email you@example.com');
    expect(notes).toContain('npm run account -- rotate --email admin@example.com');
    expect(notes).toContain(
      "Webhook URLs may point at this machine and the local network (WEBHOOK_ALLOW_PRIVATE=true, the demo's default).",
    );
    expect(notes).toContain("Media URLs may point at this machine and the local network (MEDIA_ALLOW_PRIVATE=true, the demo's default).");
  });

  it('says nothing of keys when this start printed one, and names the webhook and media settings as they are', () => {
    expect(demoNotes({ existingAccounts: null, webhooks: SET, media: REFUSED })).toBe(
      'Webhook URLs may point at this machine and the local network (WEBHOOK_ALLOW_PRIVATE=true).\n' +
        'Media URLs must point at public addresses (MEDIA_ALLOW_PRIVATE=false).\n\n',
    );
    expect(demoNotes({ existingAccounts: null, webhooks: REFUSED, media: SET })).toBe(
      'Webhook URLs must point at public addresses (WEBHOOK_ALLOW_PRIVATE=false).\n' +
        'Media URLs may point at this machine and the local network (MEDIA_ALLOW_PRIVATE=true).\n\n',
    );
  });

  it('shows three accounts at most', () => {
    const first = ['a', 'b', 'c'].map((n) => `${n}@example.com`);
    expect(demoNotes({ existingAccounts: { count: 5, first }, webhooks: DEMO, media: DEMO })).toContain(
      '(a@example.com, b@example.com, c@example.com and 2 more)',
    );
  });

  it('allows private webhook URLs by default in the demo only, and never against an explicit setting', () => {
    expect(loadSettings({}).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true' }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true', WEBHOOK_ALLOW_PRIVATE: 'false' }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadSettings({ WEBHOOK_ALLOW_PRIVATE: 'true' }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
  });

  it('allows private media URLs by default in the demo only, and never against an explicit setting', () => {
    expect(loadSettings({}).MEDIA_ALLOW_PRIVATE).toBe(false);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true' }).MEDIA_ALLOW_PRIVATE).toBe(true);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true', MEDIA_ALLOW_PRIVATE: 'false' }).MEDIA_ALLOW_PRIVATE).toBe(false);
    expect(loadSettings({ SANDBOX_EMBEDDED: 'true', WEBHOOK_ALLOW_PRIVATE: 'false' }).MEDIA_ALLOW_PRIVATE).toBe(true);
    expect(loadSettings({ MEDIA_ALLOW_PRIVATE: 'true' }).MEDIA_ALLOW_PRIVATE).toBe(true);
  });
});
