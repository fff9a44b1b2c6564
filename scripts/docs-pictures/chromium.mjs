// Chromium through playwright-core, as the tests launch it (Debian's chromium, no sandbox, nothing
// fetched in the background). playwright-core is a dependency of the packages that use it, not of
// the root: it is resolved from examples/http-service.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(`${root}examples/http-service/package.json`);

const { env } = process;
export const CHROMIUM = env.CHROME_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium; the caller closes it. */
export async function launchChromium() {
  const { chromium } = require('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
