import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { assertFeaturesKept, CHROMIUM, CHROMIUM_ARGS } from './browser.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The browser server every browser test file connects to (`launch()`), or '' when no Chromium is installed. */
    chromiumEndpoint: string;
  }
}

/**
 * The browser project's global setup: one Chromium for every browser test file of the run. Each
 * file connects to it and opens contexts of its own (a context is a fresh profile: cookies,
 * storage and cache are its own), instead of starting a browser of its own.
 */
export default async function setup(project: TestProject) {
  if (!CHROMIUM) {
    project.provide('chromiumEndpoint', '');
    return;
  }
  const server = await chromium.launchServer({ executablePath: CHROMIUM, headless: true, timeout: 15_000, args: CHROMIUM_ARGS });
  try {
    assertFeaturesKept(server.process().pid);
  } catch (error) {
    await server.close();
    throw error;
  }
  project.provide('chromiumEndpoint', server.wsEndpoint());
  return () => server.close();
}
