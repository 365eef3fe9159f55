import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http } from './helpers/app.ts';
import type { TestBrowser } from './helpers/browser.ts';
import { hasChromium, openBrowser } from './helpers/browser.ts';
import type { Linked } from './helpers/sandbox.ts';
import type { Receiver } from './helpers/receiver.ts';
import { startReceiver } from './helpers/receiver.ts';
import { scanQrImage, startWithSandbox, waitUntil } from './helpers/sandbox.ts';
import { sampleImage } from '../src/runtime/sandbox/sample-image.ts';

// UPDATE_SCREENSHOTS=1 writes the README's pictures (docs/screenshots); otherwise they go to a scratch folder.
const shots = process.env.UPDATE_SCREENSHOTS ? 'docs/screenshots' : join(tmpdir(), 'dashboard-screenshots');
mkdirSync(shots, { recursive: true });
const shoot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's WCAG 2 A and AA rules (labels, contrast, roles, names) over the page as it is now. */
const accessibilityViolations = (page: Page): Promise<string[]> =>
  page.evaluate(async () => {
    const { axe } = window as unknown as { axe: typeof import('axe-core') };
    const result = await axe.run(document, { runOnly: ['wcag2a', 'wcag2aa'] });
    return result.violations.map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });

/**
 * How a table sits in its scrolling region: how wide it is against the room it has, and the words a line
 * break cut in two (a word whose characters lie on more than one line).
 */
const tableLayout = (page: Page, region: string) =>
  page.getByRole('region', { name: region, exact: true }).evaluate((wrap) => {
    const table = wrap.querySelector('table') as HTMLTableElement;
    const broken: string[] = [];
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of (node.textContent ?? '').matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index ?? 0);
        range.setEnd(node, (word.index ?? 0) + word[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
    const columns = table.querySelectorAll('thead th').length;
    const cells = [...table.querySelectorAll('tbody tr')].map((row) => row.querySelectorAll('td').length);
    return { tableWidth: table.scrollWidth, regionScroll: wrap.scrollWidth, room: wrap.clientWidth, broken, columns, cells };
  });

const ME = '15557100001';
const BOB = '15557100002';

describe.runIf(hasChromium)('the dashboard at /, in headless Chromium against the service and the sandbox', () => {
  let ctx: Linked;
  let browser: TestBrowser | undefined;
  let page: Page;
  let sessionId = '';
  let receiver: Receiver | undefined;
  /** Console errors, uncaught exceptions, failed requests and error answers since the last test ended. */
  let problems: string[] = [];

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite', { WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_POLL_MS: 50 });
    receiver = await startReceiver();
    ctx.sandbox.control.addPhone(ME, 'Me');
    ctx.sandbox.control.addPhone(BOB, 'Bob');
    browser = await openBrowser({ width: 1100, height: 760 });
    page = browser.page;
    // From node_modules, into every document the page loads.
    await page.addInitScript({ path: axePath });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
    page.on('requestfailed', (request) => {
      const error = request.failure()?.errorText;
      // A navigation (reload, goto) cancels what the page had in flight, the icon among it; the browser's doing.
      if (error !== 'net::ERR_ABORTED') problems.push(`failed: ${request.method()} ${request.url()} ${error}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.request().method()} ${response.url()}`);
    });
  });
  // Each test fails on what went wrong in the page while it ran, unless it took the problems it expected.
  afterEach(() => {
    const seen = problems;
    problems = [];
    expect(seen).toEqual([]);
  });
  /** Takes the problems seen so far, for a test that provoked them. */
  const takeProblems = (): string[] => {
    const seen = problems;
    problems = [];
    return seen;
  };
  afterAll(async () => {
    await browser?.close();
    await ctx?.app.close();
    await ctx?.sandbox.close();
    await receiver?.close();
  });

  const session = () => page.locator('article.session', { has: page.getByRole('link', { name: 'shop' }) });

  it('refuses a wrong key with the API error, then signs in with the account key', { timeout: 120_000 }, async () => {
    await page.goto(`${ctx.app.baseUrl}/`);
    await page.getByLabel('API key').fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('UNAUTHENTICATED');
    // The refusal is the one answer expected to be an error, and Chromium logs it as one.
    expect(takeProblems()).toEqual([
      expect.stringMatching(new RegExp(`^401: GET ${ctx.app.baseUrl}/graphql\\?query=query\\+Me`)),
      expect.stringMatching(/^console: Failed to load resource: .*401/),
    ]);
    await shoot(page, 'sign-in');
    // By keyboard: Enter in the field submits the form.
    await page.getByLabel('API key').fill(ctx.key);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([ctx.key]);
  });

  it('creates a session and links it: the phone scans the QR shown on the page, CONNECTED appears without a reload', {
    timeout: 120_000,
  }, async () => {
    await page.getByLabel('Session name').fill('shop');
    await page.getByRole('button', { name: 'Create session' }).click();
    await session().waitFor();
    const created = await http(ctx.app.baseUrl, 'GET', '/v1/sessions', { key: ctx.key });
    expect(created.body).toEqual([expect.objectContaining({ sessionName: 'shop', status: 'DISCONNECTED' })]);
    sessionId = created.body[0].id;

    await session().getByRole('button', { name: 'Connect' }).click();
    const qr = session().getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    await shoot(page, 'sessions-qr');
    const src = await qr.getAttribute('src');
    expect(src).toMatch(/^data:image\/png;base64,/);
    await ctx.sandbox.control.scanQr(ME, scanQrImage(src as string));
    await expect.poll(() => session().getAttribute('data-status'), { timeout: 60_000 }).toBe('CONNECTED');
    await expect.poll(() => session().innerText()).toContain(ME);
    await shoot(page, 'sessions');
  });

  it('links a second session by pairing code, renames, pauses and resumes it, and deletes it after confirming', {
    timeout: 180_000,
  }, async () => {
    const PHONE = '15557100009';
    ctx.sandbox.control.addPhone(PHONE, 'Second');
    await page.getByLabel('Session name').fill('second');
    await page.getByRole('button', { name: 'Create session' }).click();
    const second = page.locator('article.session', { has: page.getByRole('link', { name: 'second' }) });
    await second.getByLabel('Phone number for a pairing code').fill(PHONE);
    await second.getByRole('button', { name: 'Get pairing code' }).click();
    const code = await second.getByTestId('pairing-code').innerText();
    expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    await ctx.sandbox.control.enterPairingCode(PHONE, code);
    await expect.poll(() => second.getAttribute('data-status'), { timeout: 60_000 }).toBe('CONNECTED');

    await second.getByRole('button', { name: 'Rename' }).click();
    await second.getByLabel('New name').fill('renamed');
    await second.getByRole('button', { name: 'Save' }).click();
    const renamed = page.locator('article.session', { has: page.getByRole('link', { name: 'renamed' }) });
    await renamed.waitFor();
    await renamed.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => renamed.getAttribute('data-status'), { timeout: 60_000 }).toBe('PAUSED');
    await renamed.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => renamed.getAttribute('data-status'), { timeout: 60_000 }).toBe('CONNECTED');

    // A disconnect asked for is said as such, not shown as an error.
    await renamed.getByRole('button', { name: 'Disconnect' }).click();
    await expect.poll(() => renamed.getAttribute('data-status'), { timeout: 60_000 }).toBe('DISCONNECTED');
    await expect.poll(() => renamed.innerText()).toContain('Disconnected by you');
    expect(await renamed.locator('.last-error').count()).toBe(0);
    expect(await renamed.innerText()).not.toContain('Last error');

    await renamed.getByRole('button', { name: 'Delete' }).click();
    // The question takes the focus on its safe answer.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await renamed.getByRole('group', { name: 'Delete session renamed?' }).getByRole('button', { name: 'Yes, delete' }).click();
    await renamed.waitFor({ state: 'detached' });
    const left = await http(ctx.app.baseUrl, 'GET', '/v1/sessions', { key: ctx.key });
    expect(left.body.map((x: { sessionName: string }) => x.sessionName)).toEqual(['shop']);
  });

  it('sends a text from the session page; the phone receives it and its reply shows in the live feed', { timeout: 120_000 }, async () => {
    await session().getByRole('link', { name: 'shop' }).click();
    await page.getByRole('heading', { name: 'Session shop' }).waitFor();
    // An API refusal is shown with its field details.
    await page.getByLabel('To (phone number or JID)').fill('not a number');
    await page.getByLabel('Message', { exact: true }).fill('hello from the dashboard');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('VALIDATION_FAILED');
    expect(await page.getByRole('alert').innerText()).toMatch(/to: /);

    await page.getByLabel('To (phone number or JID)').fill(BOB);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // Sent at once (no pacing in this test app): not said to be queued.
    await page
      .getByRole('status')
      .filter({ hasText: /^Sent as / })
      .waitFor();
    expect(await page.getByText('Queued as').count()).toBe(0);
    await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).map((e) => e.content),
      (contents) => contents.includes('hello from the dashboard'),
      30_000,
    );
    // The phone's delivery receipt shows in the history (read again until it has arrived).
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh', exact: true }).click();
          return page.locator('tr[data-message-id]').first().innerText();
        },
        { timeout: 30_000 },
      )
      .toMatch(/SENT[\s\S]*Delivered/);

    await ctx.sandbox.control.sendText(BOB, ME, 'reply from Bob');
    const feed = page.getByRole('region', { name: 'Incoming (live)' });
    await expect.poll(() => feed.innerText(), { timeout: 30_000 }).toContain('reply from Bob');
    await shoot(page, 'session');
    const stored = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages`, { key: ctx.key });
    expect(stored.body.items.map((m: { content: string }) => m.content)).toContain('hello from the dashboard');
  });

  it("shows a poll's tally in the session's history, the phone's vote counted", { timeout: 120_000 }, async () => {
    const sent = await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${sessionId}/messages/poll`, {
      key: ctx.key,
      body: { to: BOB, name: 'Dashboard lunch?', options: ['Pizza', 'Sushi'] },
    });
    expect(sent.status).toBe(200);
    const record = await waitUntil(
      () => http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages/${sent.body.id}`, { key: ctx.key }),
      (r) => r.body.status === 'SENT',
    );
    await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).some((e) => e.id === record.body.waMessageId),
      (found) => found,
    );
    await ctx.sandbox.control.vote(BOB, ME, record.body.waMessageId, ['Sushi']);
    const row = page.locator(`tr[data-message-id="${sent.body.id}"]`);
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh', exact: true }).click();
          return (await row.count()) > 0 ? row.innerText() : '';
        },
        { timeout: 30_000 },
      )
      .toMatch(/Dashboard lunch\?[\s\S]*Poll, one choice: 1 voter[\s\S]*Pizza: 0 votes[\s\S]*Sushi: 1 vote/);
  });

  it('says "Queued as" only for a send the pacer held, with when it goes', { timeout: 120_000 }, async () => {
    // This app sends unpaced; the pacer is switched on for two sends to one chat, the second of which must wait.
    const pacer = ctx.app.deps.pacer as { enabled: boolean };
    pacer.enabled = true;
    try {
      await page.getByLabel('To (phone number or JID)').fill(BOB);
      await page.getByLabel('Message', { exact: true }).fill('paced first');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /^Sent as / })
        .waitFor();
      await page.getByLabel('Message', { exact: true }).fill('paced second');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const queued = page.getByRole('status').filter({ hasText: /^Queued as / });
      await queued.waitFor();
      expect(await queued.innerText()).toMatch(/^Queued as [0-9a-f-]{36}: it goes at \S/);
      const id = /^Queued as ([0-9a-f-]{36})/.exec(await queued.innerText())?.[1];
      const record = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages/${id}`, { key: ctx.key });
      expect(record.body.content).toBe('paced second');
    } finally {
      pacer.enabled = false;
    }
    await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).map((e) => e.content),
      (contents) => contents.includes('paced second'),
      30_000,
    );
  });

  it('fits the outgoing messages table at 1280 px: every column shown, no word broken', { timeout: 120_000 }, async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await expect.poll(() => page.locator('tr[data-message-id]').count()).toBeGreaterThanOrEqual(3);
    const layout = await tableLayout(page, 'Outgoing messages table');
    expect(layout.tableWidth).toBeLessThanOrEqual(layout.room);
    expect(layout.regionScroll).toBeLessThanOrEqual(layout.room);
    expect(layout.broken).toEqual([]);
    expect(layout.cells.every((n) => n === layout.columns)).toBe(true);
    await shoot(page, 'session-1280');
    await page.setViewportSize({ width: 1100, height: 760 });
  });

  it('shows a received image as a picture with a link to the file', { timeout: 120_000 }, async () => {
    const png = sampleImage();
    await ctx.sandbox.control.sendMedia(BOB, ME, { type: 'image', data: png, mimetype: 'image/png', caption: 'a photo from Bob' });
    const feed = page.getByRole('region', { name: 'Incoming (live)' });
    const item = feed.getByRole('listitem').filter({ hasText: 'a photo from Bob' });
    const picture = item.getByRole('img', { name: /image from Bob/ });
    await picture.waitFor({ timeout: 30_000 });
    await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(96);
    const link = item.getByRole('link', { name: /^Image: .+\(\d+ (B|KB)\)$/ });
    expect(await link.getAttribute('download')).toMatch(/\.png$/);
    // The link holds the file the service received, byte for byte.
    const bytes = await link.evaluate(async (a: HTMLAnchorElement) => [...new Uint8Array(await (await fetch(a.href)).arrayBuffer())]);
    expect(Buffer.from(bytes).equals(png)).toBe(true);
    await shoot(page, 'session-media');
  });

  it("shows the session's sending health and its send queue, and cancels a queued message", { timeout: 120_000 }, async () => {
    const scheduled = await http(ctx.app.baseUrl, 'POST', `/v1/sessions/${sessionId}/messages/schedule`, {
      key: ctx.key,
      body: { to: BOB, message: 'queued for later', delayMs: 3_600_000 },
    });
    expect(scheduled.status).toBe(200);
    const queue = page.getByRole('region', { name: 'Send queue' });
    const row = queue.locator(`tr[data-queued-id="${scheduled.body.messageId}"]`);
    await expect
      .poll(
        async () => {
          await queue.getByRole('button', { name: 'Refresh queue' }).click();
          return (await row.count()) > 0 ? row.innerText() : '';
        },
        { timeout: 30_000 },
      )
      .toContain('queued for later');
    expect(await queue.getByRole('status').innerText()).toMatch(/Sending normally\. 1 waiting/);
    await row.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(0);
    const record = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages/${scheduled.body.messageId}`, { key: ctx.key });
    expect(record.body).toMatchObject({ status: 'FAILED', error: 'cancelled by the client before it was sent' });
    expect(ctx.sandbox.control.inbox(BOB).some((e) => e.content === 'queued for later')).toBe(false);
  });

  it('reacts to, replies to and deletes for everyone messages from the session page; the phone sees each', {
    timeout: 120_000,
  }, async () => {
    const feed = page.getByRole('region', { name: 'Incoming (live)' });
    const history = page.getByRole('region', { name: 'Outgoing messages' });
    const sent = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages`, { key: ctx.key });
    const record = sent.body.items.find((m: { content: string }) => m.content === 'hello from the dashboard');
    const row = history.locator(`tr[data-message-id="${record.id}"]`);

    // a reaction to our sent message
    await row.getByRole('button', { name: 'React 👍 to “hello from the dashboard”' }).click();
    await row.getByRole('status').filter({ hasText: 'You reacted 👍' }).waitFor();
    const reaction = await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).find((e) => e.kind === 'reaction' && e.content === '👍'),
      (e) => e !== undefined,
      30_000,
    );
    expect(((reaction?.raw ?? {}) as { reactionMessage?: { key?: { id?: string } } }).reactionMessage?.key?.id).toBe(record.waMessageId);

    // a reply to a received message, quoting it
    const question = await ctx.sandbox.control.sendText(BOB, ME, 'question from Bob');
    await expect.poll(() => feed.innerText(), { timeout: 30_000 }).toContain('question from Bob');
    await feed.getByRole('button', { name: 'Reply to “question from Bob”' }).click();
    await page.getByText('Replying to “question from Bob”').waitFor();
    // The form takes the chat's address once React has run its effect, a moment after the banner shows.
    await expect.poll(() => page.getByLabel('To (phone number or JID)').inputValue(), { timeout: 5_000 }).toBe(`${BOB}@s.whatsapp.net`);
    await page.getByLabel('Message', { exact: true }).fill('answer from the dashboard');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Sent as / })
      .waitFor();
    const answer = await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).find((e) => e.content === 'answer from the dashboard'),
      (e) => e !== undefined,
      30_000,
    );
    const context = ((answer?.raw ?? {}) as { extendedTextMessage?: { contextInfo?: { stanzaId?: string } } }).extendedTextMessage
      ?.contextInfo;
    expect(context?.stanzaId).toBe(question.id);
    expect(await page.getByText('Replying to').count()).toBe(0);

    // delete for everyone, after confirming
    await row.getByRole('button', { name: 'Delete for everyone' }).click();
    await row.getByRole('button', { name: 'Yes, delete for everyone' }).click();
    await expect.poll(() => row.innerText(), { timeout: 30_000 }).toContain('Deleted for everyone');
    await waitUntil(
      async () => ctx.sandbox.control.inbox(BOB).find((e) => e.kind === 'revoke' && e.content === record.waMessageId),
      (e) => e !== undefined,
      30_000,
    );
    expect(await row.getByRole('button', { name: 'Delete for everyone' }).count()).toBe(0);
    await shoot(page, 'session-actions');
  });

  it('imports a CSV of contacts through the bulk import and shows created, updated, skipped and errors', { timeout: 120_000 }, async () => {
    await http(ctx.app.baseUrl, 'POST', '/v1/contacts', { key: ctx.key, body: { phone: '15557000003', name: 'Old name' } });
    await page.getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('heading', { name: 'Contacts', exact: true }).waitFor();
    const csv = [
      'phone,name,tags,city',
      '15557000001,Ann,vip;csv,Paris',
      '15557000002,Bob,csv,',
      '15557000003,New name,csv,',
      '15557000001,Ann again,,',
      ',No id,,',
    ].join('\n');
    await page.getByLabel('CSV file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    const result = page.getByRole('status').filter({ hasText: 'Created' });
    await result.waitFor();
    expect(await result.getByTestId('import-created').innerText()).toBe('2');
    expect(await result.getByTestId('import-updated').innerText()).toBe('1');
    expect(await result.getByTestId('import-skipped').innerText()).toBe('1');
    expect(await result.getByTestId('import-errors').innerText()).toBe('1');
    expect(await result.innerText()).toContain('Row 5');

    const stored = await http(ctx.app.baseUrl, 'GET', '/v1/contacts/15557000001', { key: ctx.key });
    expect(stored.body).toMatchObject({ name: 'Ann', tags: ['vip', 'csv'], variables: { city: 'Paris' } });
    await page.getByLabel('Tag', { exact: true }).fill('csv');
    await expect.poll(() => page.locator('tr[data-jid]').count()).toBe(3);
    await page.getByLabel('Tag', { exact: true }).fill('vip');
    await expect.poll(() => page.locator('tr[data-jid]').count()).toBe(1);
    await page.getByLabel('Tag', { exact: true }).fill('');

    // One contact by hand.
    await page.getByLabel('Phone number', { exact: true }).fill('15557000009');
    await page.getByLabel('Name', { exact: true }).fill('Dana');
    await page.getByLabel('Tags (comma-separated)').fill('manual, vip');
    await page.getByRole('button', { name: 'Save contact' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).innerText())
      .toBe('Saved Dana (15557000009@s.whatsapp.net)');
    await expect.poll(() => page.locator('tr[data-jid="15557000009@s.whatsapp.net"]').innerText()).toMatch(/Dana\s+15557000009/);
    const dana = await http(ctx.app.baseUrl, 'GET', '/v1/contacts/15557000009', { key: ctx.key });
    expect(dana.body).toMatchObject({ name: 'Dana', phone: '15557000009', tags: ['manual', 'vip'] });
    await shoot(page, 'contacts');
  });

  it('lists contact groups, creates one, adds members to it and removes one', { timeout: 120_000 }, async () => {
    const made = await http(ctx.app.baseUrl, 'POST', '/v1/contacts/groups', { key: ctx.key, body: { name: 'Customers' } });
    await http(ctx.app.baseUrl, 'POST', `/v1/contacts/groups/${made.body.id}/members`, { key: ctx.key, body: { jids: ['15557000003'] } });
    // Opened afresh, so the page reads the group made over REST.
    await page.reload();
    const groups = page.getByRole('list', { name: 'Groups' });
    const group = (name: string) => groups.locator(`li[data-group="${name}"]`);
    await expect.poll(() => group('Customers').getByTestId('member-count').innerText()).toBe('1');

    await page.getByLabel('New group name').fill('VIP');
    await page.getByRole('button', { name: 'Create group' }).click();
    await expect.poll(() => group('VIP').getByTestId('member-count').innerText()).toBe('0');
    expect(await page.getByLabel('New group name').inputValue()).toBe('');

    await page.getByLabel('Group', { exact: true }).selectOption({ label: 'VIP' });
    await page.getByLabel('Contact JIDs (comma-separated)').fill('15557000001, 15557000002@s.whatsapp.net, 15557999999');
    await page.getByRole('button', { name: 'Add members' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Added' }).innerText())
      .toBe('Added 2 · 15557999999: contact_not_found');
    await expect.poll(() => group('VIP').getByTestId('member-count').innerText()).toBe('2');

    await group('VIP').getByRole('button', { name: 'Show members' }).click();
    const members = page.getByRole('list', { name: 'Members of VIP' });
    // Members come in the order of their contacts' ids.
    await expect
      .poll(async () => (await members.getByRole('listitem').allInnerTexts()).sort())
      .toEqual(['Ann 15557000001@s.whatsapp.net Remove', 'Bob 15557000002@s.whatsapp.net Remove']);
    await members.getByRole('button', { name: 'Remove Ann from VIP' }).click();
    await expect.poll(() => members.getByRole('listitem').allInnerTexts()).toEqual(['Bob 15557000002@s.whatsapp.net Remove']);
    await expect.poll(() => group('VIP').getByTestId('member-count').innerText()).toBe('1');

    const listed = await http(ctx.app.baseUrl, 'GET', '/v1/contacts/groups', { key: ctx.key });
    expect(listed.body).toEqual([
      expect.objectContaining({ name: 'Customers', contactCount: 1 }),
      expect.objectContaining({ name: 'VIP', contactCount: 1 }),
    ]);

    // Deleting a group, after confirming, leaves its contacts in the address book.
    await group('Customers').getByRole('button', { name: 'Delete group' }).click();
    await group('Customers').getByRole('button', { name: 'Yes, delete group' }).click();
    await group('Customers').waitFor({ state: 'detached' });
    const left = await http(ctx.app.baseUrl, 'GET', '/v1/contacts/groups', { key: ctx.key });
    expect(left.body.map((g: { name: string }) => g.name)).toEqual(['VIP']);
    expect((await http(ctx.app.baseUrl, 'GET', '/v1/contacts/15557000003', { key: ctx.key })).status).toBe(200);
    await shoot(page, 'contact-groups');
  });

  it('schedules a message into the pending list, starts a campaign and follows its progress live', { timeout: 120_000 }, async () => {
    const CAROL = '15557100003';
    ctx.sandbox.control.addPhone(CAROL, 'Carol');
    await page.getByRole('link', { name: 'Scheduling' }).click();
    // A message scheduled an hour ahead waits in the pending list.
    const inAnHour = new Date(Date.now() + 3_600_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('To', { exact: true }).fill(BOB);
    await page.getByLabel('Message', { exact: true }).fill('see you in an hour');
    await page.getByLabel('Send at').fill(inAnHour);
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Scheduled' }).waitFor();
    const pending = page.getByRole('region', { name: 'Pending messages' });
    await expect.poll(() => pending.innerText()).toContain('see you in an hour');
    // ... and is cancelled from there.
    const scheduledId = (await page.getByRole('status').filter({ hasText: 'Scheduled' }).innerText()).split(' ')[1];
    await pending.getByRole('button', { name: `Cancel “see you in an hour” to ${BOB}` }).click();
    await expect.poll(() => pending.innerText()).not.toContain('see you in an hour');
    const cancelled = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages/${scheduledId}`, { key: ctx.key });
    expect(cancelled.body).toMatchObject({ status: 'FAILED', error: 'cancelled by the client before it was sent' });

    // A recurring message is started, listed, and cancelled.
    const recurring = page.getByRole('region', { name: 'Recurring messages' });
    await recurring.getByLabel('Recurring to').fill(BOB);
    await recurring.getByLabel('Recurring message').fill('every hour');
    await recurring.getByLabel('Every (minutes)').fill('60');
    await recurring.getByRole('button', { name: 'Start recurring' }).click();
    await recurring.getByRole('status').filter({ hasText: 'Recurring every 60 min' }).waitFor();
    await expect
      .poll(() => recurring.getByRole('listitem').allInnerTexts())
      .toEqual([`To ${BOB}@s.whatsapp.net every 60 min: “every hour” Cancel`]);
    const timers = await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages/recurring`, { key: ctx.key });
    expect(timers.body.items).toEqual([expect.objectContaining({ message: 'every hour', everyMs: 3_600_000 })]);
    await recurring.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => recurring.getByRole('listitem').count()).toBe(0);
    expect((await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/messages/recurring`, { key: ctx.key })).body.items).toEqual([]);
    await page.getByLabel('Recipients, one per line: number or JID, then a comma and a name').fill(`${BOB}, Bob\n${CAROL}, Carol`);
    await page.getByLabel('Delay between messages (ms)').fill('200');
    await page.getByRole('button', { name: 'Start campaign' }).click();
    const progress = page.locator('.campaign');
    await expect.poll(() => progress.innerText(), { timeout: 60_000 }).toContain('2 of 2 done (2 sent, 0 failed, 0 remaining)');
    await shoot(page, 'scheduling');
    expect(ctx.sandbox.control.inbox(CAROL).map((e) => e.content)).toContain('Hello Carol!');
  });

  it('adds a webhook endpoint, shows its delivery log and replays a delivery', { timeout: 120_000 }, async () => {
    const hook = receiver as Receiver;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL', { exact: true }).fill(hook.url);
    await page.getByLabel('Events (comma-separated)', { exact: true }).fill('message.received');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = page.getByRole('status').filter({ hasText: 'Signing secret' }).locator('code');
    hook.verifyWith(await secret.innerText());
    await ctx.sandbox.control.sendText(BOB, ME, 'for the webhook');
    await waitUntil(
      async () => hook.received.filter((r) => r.verified).length,
      (n) => n === 1,
      30_000,
    );
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    const deliveryLog = page.getByRole('table', { name: 'Delivery log' }).locator('tbody');
    // The receiver answers before the log records DELIVERED, so the log is read again until it does.
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh', exact: true }).click();
          return deliveryLog.innerText();
        },
        { timeout: 30_000 },
      )
      .toMatch(/message\.received[\s\S]*DELIVERED/);
    const row = deliveryLog.locator('tr', { hasText: 'message.received' });
    await row.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').filter({ hasText: 'Replaying 1 deliveries' }).waitFor();
    await waitUntil(
      async () => hook.received.filter((r) => r.verified).length,
      (n) => n === 2,
      30_000,
    );
    expect(hook.received[1].payload.data).toMatchObject(hook.received[0].payload.data);

    await page.getByRole('button', { name: 'Send a test event' }).click();
    const tested = page.getByRole('status').filter({ hasText: 'Test event' });
    await tested.waitFor();
    const eventId = await tested.locator('code').innerText();
    await waitUntil(
      async () => hook.received.filter((r) => r.verified).length,
      (n) => n === 3,
      30_000,
    );
    expect(hook.received[2].payload).toMatchObject({ type: 'webhook.test', data: { message: 'This is a test event' } });
    // The event id the page shows is the one the receiver got (webhook-id).
    expect(hook.received[2].id).toBe(eventId);
    await shoot(page, 'webhooks');
  });

  it('the inbox: chats with unread badges, a thread that marks them read and updates live, replies that reach the phone, search', {
    timeout: 180_000,
  }, async () => {
    const DANA = '15557100004';
    const ERIN = '15557100005';
    ctx.sandbox.control.addPhone(DANA, 'Dana');
    ctx.sandbox.control.addPhone(ERIN, 'Erin');
    const chatsOf = async () =>
      (await http(ctx.app.baseUrl, 'GET', `/v1/sessions/${sessionId}/chats?limit=200`, { key: ctx.key })).body.chats as Array<{
        id: string;
        unreadCount: number;
      }>;
    const unreadOf = async (jid: string) => (await chatsOf()).find((c) => c.id === jid)?.unreadCount;
    // Opening a chat marks it read (markChatRead), which sends read receipts: the session's setting allows them.
    const settings = await http(ctx.app.baseUrl, 'PATCH', `/v1/sessions/${sessionId}/settings`, {
      key: ctx.key,
      body: { sendReadReceipts: true },
    });
    expect(settings.status).toBe(200);
    // Erin's chat holds more than a page (25) of messages; Dana writes last, twice.
    for (let i = 1; i <= 35; i += 1) await ctx.sandbox.control.sendText(ERIN, ME, `note ${i}`);
    await waitUntil(
      () => unreadOf(`${ERIN}@s.whatsapp.net`),
      (n) => n === 35,
      30_000,
    );
    // A message's time on the network is in whole seconds, and chats of the same second are ordered by
    // their id: Dana writes in a later second than Erin's last note, so that hers is the latest chat.
    const nextSecond = async () => {
      const now = Math.floor(Date.now() / 1000);
      await waitUntil(
        async () => Math.floor(Date.now() / 1000),
        (second) => second > now,
        5_000,
      );
    };
    await nextSecond();
    await ctx.sandbox.control.sendText(DANA, ME, 'hi from Dana');
    await ctx.sandbox.control.sendText(DANA, ME, 'are you there?');
    await waitUntil(
      () => unreadOf(`${DANA}@s.whatsapp.net`),
      (n) => n === 2,
      30_000,
    );

    await page.goto(`${ctx.app.baseUrl}/#/sessions/${sessionId}`);
    await page.getByRole('link', { name: 'Inbox: chats and conversations' }).click();
    await page.getByRole('heading', { name: 'Inbox', exact: true }).waitFor();
    const list = page.getByRole('list', { name: 'Chats, latest first' });
    const chat = (number: string) => list.locator(`li[data-chat-id="${number}@s.whatsapp.net"]`);
    const firstChat = () => list.getByRole('listitem').first().getAttribute('data-chat-id');
    // Latest activity first, with its name, its last message and its unread count.
    await expect.poll(() => firstChat()).toBe(`${DANA}@s.whatsapp.net`);
    expect(await chat(DANA).innerText()).toMatch(/^Dana\s[\s\S]*are you there\?\s*2\s*unread$/);
    expect(await chat(ERIN).getByTestId('unread').innerText()).toMatch(/^35\s*unread$/);
    await shoot(page, 'inbox');

    // Opening the chat shows its thread, newest at the bottom, and marks it read: the badge goes.
    await chat(DANA).getByRole('link').click();
    const thread = page.getByRole('region', { name: 'Messages with Dana' });
    const bubbles = thread.locator('li[data-message-id]');
    await expect
      .poll(() => bubbles.allInnerTexts())
      .toEqual([expect.stringMatching(/^hi from Dana/), expect.stringMatching(/^are you there\?/)]);
    await expect.poll(() => chat(DANA).getAttribute('data-unread')).toBe('0');
    expect(await chat(DANA).getByTestId('unread').count()).toBe(0);
    expect(await unreadOf(`${DANA}@s.whatsapp.net`)).toBe(0);

    // A new message in the open chat appears without a reload (and is read); one in another chat moves
    // that chat to the top with a larger badge.
    const live = await ctx.sandbox.control.sendText(DANA, ME, 'a live one');
    await expect.poll(() => bubbles.last().innerText(), { timeout: 30_000 }).toMatch(/^a live one/);
    const bobBefore = Number(await chat(BOB).getAttribute('data-unread'));
    await nextSecond();
    await ctx.sandbox.control.sendText(BOB, ME, 'Bob again');
    await expect.poll(() => firstChat(), { timeout: 30_000 }).toBe(`${BOB}@s.whatsapp.net`);
    await expect.poll(() => chat(BOB).getAttribute('data-unread')).toBe(String(bobBefore + 1));
    expect(await chat(BOB).innerText()).toContain('Bob again');
    await expect.poll(() => unreadOf(`${DANA}@s.whatsapp.net`)).toBe(0);

    // A reply quoting the live message, typed in the box: the phone receives it with the quote, and the
    // thread shows it with the quoted message, then its receipts and the phone's reaction.
    await thread.getByRole('button', { name: 'Reply to “a live one”' }).click();
    await page.getByText('Replying to “a live one”').waitFor();
    await page.getByLabel('Message', { exact: true }).fill('answer from the inbox');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const answer = await waitUntil(
      async () => ctx.sandbox.control.inbox(DANA).find((e) => e.content === 'answer from the inbox'),
      (e) => e !== undefined,
      30_000,
    );
    const context = ((answer?.raw ?? {}) as { extendedTextMessage?: { contextInfo?: { stanzaId?: string } } }).extendedTextMessage
      ?.contextInfo;
    expect(context?.stanzaId).toBe(live.id);
    const mine = thread.locator(`li[data-wa-id="${answer?.id}"]`);
    await expect.poll(() => mine.innerText(), { timeout: 30_000 }).toMatch(/^Dana a live one\s+answer from the inbox/);
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
    expect(await page.getByText('Replying to').count()).toBe(0);
    await expect.poll(() => mine.locator('[data-receipt]').getAttribute('data-receipt'), { timeout: 30_000 }).toBe('Delivered');
    ctx.sandbox.control.read(DANA, { ids: [answer?.id ?? ''] });
    await expect.poll(() => mine.locator('[data-receipt]').getAttribute('data-receipt'), { timeout: 30_000 }).toBe('Read');
    await ctx.sandbox.control.react(DANA, ME, answer?.id ?? '', '❤️');
    await expect.poll(() => mine.getByRole('list', { name: 'Reactions' }).innerText(), { timeout: 30_000 }).toMatch(/^❤️/);

    // The phone edits and deletes its messages, and sends a picture: each shows as it happens.
    await ctx.sandbox.control.edit(DANA, ME, live.id, 'a live one, edited');
    const edited = thread.locator(`li[data-wa-id="${live.id}"]`);
    await expect.poll(() => edited.innerText(), { timeout: 30_000 }).toMatch(/^a live one, edited\s[\s\S]*edited/);
    const gone = await ctx.sandbox.control.sendText(DANA, ME, 'oops, wrong chat');
    const deleted = thread.locator(`li[data-wa-id="${gone.id}"]`);
    await expect.poll(() => deleted.innerText(), { timeout: 30_000 }).toMatch(/^oops, wrong chat/);
    await ctx.sandbox.control.revoke(DANA, ME, gone.id);
    await expect.poll(() => deleted.innerText(), { timeout: 30_000 }).toMatch(/^This message was deleted/);
    await ctx.sandbox.control.sendMedia(DANA, ME, {
      type: 'image',
      data: sampleImage(),
      mimetype: 'image/png',
      caption: 'a photo from Dana',
    });
    const picture = thread.getByRole('img', { name: /image from Dana/ });
    await picture.waitFor({ timeout: 30_000 });
    await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(96);
    await shoot(page, 'inbox-thread');

    // Older messages come a page at a time through the cursor, above the ones shown.
    await chat(ERIN).getByRole('link').click();
    const erin = page.getByRole('region', { name: 'Messages with Erin' });
    const notes = erin.locator('li[data-message-id] .text');
    await expect.poll(() => notes.count()).toBe(25);
    expect(await notes.first().innerText()).toBe('note 11');
    expect(await notes.last().innerText()).toBe('note 35');
    await erin.getByRole('button', { name: 'Older messages' }).click();
    await expect.poll(() => notes.count()).toBe(35);
    expect(await notes.allInnerTexts()).toEqual(Array.from({ length: 35 }, (_, i) => `note ${i + 1}`));
    expect(await erin.getByRole('button', { name: 'Older messages' }).count()).toBe(0);
    await expect.poll(() => chat(ERIN).getAttribute('data-unread')).toBe('0');

    // Search finds a message by a word's start; its result opens the chat.
    await page.getByLabel('Search messages').fill('answ inbox');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByRole('region', { name: 'Search results' });
    await expect.poll(() => results.getByRole('status').innerText()).toMatch(/^1 message found for “answ inbox”/);
    await results.getByRole('link', { name: /answer from the inbox/ }).click();
    await page.getByRole('region', { name: 'Messages with Dana' }).waitFor();
  });

  it('serves a favicon to every page: the dashboard names it, and /favicon.ico answers for the others', async () => {
    expect(await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((l) => l.getAttribute('href')))).toEqual([
      '/favicon.svg',
      '/favicon.ico',
    ]);
    const ico = await fetch(`${ctx.app.baseUrl}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toBe('image/vnd.microsoft.icon');
    // An ICO file: reserved 0, type 1 (icon).
    expect([...new Uint8Array(await ico.arrayBuffer()).slice(0, 4)]).toEqual([0, 0, 1, 0]);
    const svg = await fetch(`${ctx.app.baseUrl}/favicon.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  it('fits a 375 px wide screen without sideways scrolling, and axe finds no WCAG 2 AA violation', { timeout: 120_000 }, async () => {
    await page.setViewportSize({ width: 375, height: 760 });
    const inbox = `#/sessions/${sessionId}/inbox`;
    const thread = `${inbox}/15557100004%40s.whatsapp.net`;
    for (const hash of ['#/sessions', `#/sessions/${sessionId}`, inbox, thread, '#/contacts', '#/scheduling', '#/webhooks']) {
      await page.goto(`${ctx.app.baseUrl}/${hash}`);
      await page.reload();
      await page.locator('main h1').first().waitFor();
      await page.locator('main .card').filter({ visible: true }).first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth), hash).toBeLessThanOrEqual(375);
      if (hash === `#/sessions/${sessionId}`) {
        await page.locator('tr[data-message-id]').first().waitFor();
        const layout = await tableLayout(page, 'Outgoing messages table');
        expect(layout.tableWidth).toBeLessThanOrEqual(layout.room);
        expect(layout.regionScroll).toBeLessThanOrEqual(layout.room);
        expect(layout.broken).toEqual([]);
        expect(layout.cells.every((n) => n === layout.columns)).toBe(true);
        await shoot(page, 'session-mobile');
      }
      // On a narrow screen the inbox shows the chats, or the open chat with a way back to them.
      if (hash === inbox) {
        await page.getByRole('list', { name: 'Chats, latest first' }).getByRole('listitem').first().waitFor();
        expect(await page.getByRole('region', { name: 'Conversation' }).isVisible()).toBe(false);
      }
      if (hash === thread) {
        await page.getByRole('region', { name: 'Messages with Dana' }).locator('li[data-message-id]').first().waitFor();
        expect(await page.getByRole('region', { name: 'Chats', exact: true }).isVisible()).toBe(false);
        expect(await page.getByRole('link', { name: '← All chats' }).isVisible()).toBe(true);
        await shoot(page, 'inbox-mobile');
      }
      expect(await accessibilityViolations(page), hash).toEqual([]);
    }
    await page.goto(`${ctx.app.baseUrl}/#/sessions`);
    await session().waitFor();
    await shoot(page, 'sessions-mobile');
  });

  it('opens GraphiQL with the signed-in key in its headers: a query runs as the account', { timeout: 180_000 }, async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('link', { name: 'GraphiQL' }).click();
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await expect.poll(() => headers.innerText(), { timeout: 60_000 }).toContain(ctx.key);
    await page.locator('.graphiql-execute-button').click();
    const me = await http(ctx.app.baseUrl, 'GET', '/v1/accounts/me', { key: ctx.key });
    await expect.poll(() => page.locator('.graphiql-response').innerText(), { timeout: 60_000 }).toContain(me.body.email);
    await page.goBack();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });

  it('signs out: the key leaves session storage and the sign-in form returns; nothing was fetched from outside', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([]);
    expect(browser?.outside).toEqual([]);
  });
});
