/**
 * Headless Chromium for the HTML report tests: Debian's package (`.ci/run` installs it when
 * missing), driven by puppeteer-core over the DevTools protocol; never a downloaded browser.
 */
import {existsSync} from 'node:fs'

import puppeteer, {type Browser} from 'puppeteer-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Why the browser tests cannot run here, or undefined when they can. In CI a missing browser is a failure, not a skip. */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined
  const why = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
  if (process.env.CI) throw new Error(`${why}: .ci/run installs it`)
  return why
}

export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
  return puppeteer.launch({executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']})
}
