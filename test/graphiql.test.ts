import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './helpers/app.ts';
import { startTestApp } from './helpers/app.ts';
import type { TestBrowser } from './helpers/browser.ts';
import { hasChromium, openBrowser } from './helpers/browser.ts';

describe.runIf(hasChromium)('GraphiQL at /graphql works offline', () => {
  let app: TestApp;
  let browser: TestBrowser | undefined;

  beforeAll(async () => {
    app = await startTestApp('sqlite');
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('loads with nothing from outside the service, takes x-api-key in the header editor and runs a query', {
    timeout: 180_000,
  }, async () => {
    const account = await app.newAccount('graphiql@example.com');
    const { page, outside } = browser as TestBrowser;
    await page.goto(`${app.baseUrl}/graphql`);
    // The header editor is open by default and holds an x-api-key entry to fill in.
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await headers.waitFor();
    await expect.poll(() => headers.innerText(), { timeout: 60_000 }).toContain('x-api-key');
    await headers.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ 'x-api-key': account.apiKey }));
    await page.locator('.graphiql-execute-button').click();
    const response = page.locator('.graphiql-response');
    await expect.poll(() => response.innerText(), { timeout: 60_000 }).toContain('graphiql@example.com');
    expect(outside).toEqual([]);
  });
});
