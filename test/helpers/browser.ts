import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Debian's chromium package (`.ci/run` installs it when missing); CHROMIUM_PATH points elsewhere. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);

/** Launching, each navigation and each wait; generous, as the machine is shared and slow. */
const LAUNCH_TIMEOUT_MS = 60_000;
const ACTION_TIMEOUT_MS = 30_000;

export interface TestBrowser {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Every request the page made to a host other than the service's loopback address; each was refused. */
  outside: string[];
  close: () => Promise<void>;
}

const isLoopback = (url: URL): boolean => url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';

/**
 * Headless Chromium with one page. Requests to anything but loopback (http, https, WebSocket) are
 * aborted and recorded, so a test can assert that the page needs nothing from the outside.
 * close() is safe to call more than once and on a half-started browser.
 */
export const openBrowser = async (viewport = { width: 1280, height: 800 }): Promise<TestBrowser> => {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    timeout: LAUNCH_TIMEOUT_MS,
    args: ['--disable-dev-shm-usage', '--no-first-run', '--disable-gpu'],
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await browser.close();
  };
  try {
    const context = await browser.newContext({ viewport });
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(LAUNCH_TIMEOUT_MS);
    const outside: string[] = [];
    await context.route(
      (url) => !isLoopback(url),
      async (route) => {
        outside.push(route.request().url());
        await route.abort('blockedbyclient');
      },
    );
    await context.routeWebSocket(
      (url) => !isLoopback(url),
      (ws) => {
        outside.push(ws.url());
        void ws.close();
      },
    );
    const page = await context.newPage();
    return { browser, context, page, outside, close };
  } catch (err) {
    await close();
    throw err;
  }
};

/** Runs fn with a fresh browser, closed on every path. */
export const withBrowser = async <T>(fn: (b: TestBrowser) => Promise<T>, viewport?: { width: number; height: number }): Promise<T> => {
  const b = await openBrowser(viewport);
  try {
    return await fn(b);
  } finally {
    await b.close();
  }
};
