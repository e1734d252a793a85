// Real Chromium for the dashboard's browser tests, through playwright-core (which ships no
// browser). Where it comes from, first found wins:
//   1. CHROMIUM_PATH, when set
//   2. Debian's /usr/bin/chromium (`apt-get install -y chromium`; .ci/run may install it)
//   3. @sparticuz/chromium, a devDependency: a headless Chromium inside the npm package,
//      unpacked into the temporary directory at first use, so `npm ci && npm test` needs
//      nothing else on a fresh x64 Linux machine
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export async function launchChromium(): Promise<{ browser: Browser; source: string }> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return { browser: await chromium.launch({ executablePath: fromEnv, headless: true }), source: fromEnv };
  for (const path of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (existsSync(path)) return { browser: await chromium.launch({ executablePath: path, headless: true, args: ['--no-sandbox'] }), source: path };
  }
  const packaged = (await import('@sparticuz/chromium')).default;
  const executablePath = await packaged.executablePath();
  return { browser: await chromium.launch({ executablePath, headless: true, args: packaged.args }), source: '@sparticuz/chromium' };
}
