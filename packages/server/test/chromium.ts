// The Chromium the studio and attack tests drive: Debian's (or CHROME_PATH), with the flags the
// machine needs, plus any of a test's own.
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROME_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const launchChromium = (...more: string[]): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...more] });
