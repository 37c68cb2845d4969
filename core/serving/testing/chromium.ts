// Test and benchmark helper: Debian's chromium, headless, driven by playwright-core (DESIGN.md "Browser
// tests"; `npx playwright install` cannot work here). The flags keep it off the network it cannot reach.
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.PLATFORM_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
}

/** The `platform-server web page on http://...` line's address. */
export function webUrlOf(output: string): string {
  const match = /platform-server web page on (http:\/\/\S+)/.exec(output);
  if (!match) throw new Error(`no web line in the output:\n${output}`);
  return match[1];
}
