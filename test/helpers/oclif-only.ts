/**
 * pooltool through oclif alone, for the tests that hold bin/run.js's fast paths (help, usage errors) byte-identical
 * with it: a script that does what bin/run.js does minus the fast paths (the secret guard, then src/cli/main.ts),
 * and a spawn that captures a script's exit code and whole output.
 */
import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

import {REPO_ROOT} from './cli.js'

export interface ScriptRun {
  code: number | null
  stdout: string
  stderr: string
}

const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist/src/cli', file)).href

/** Writes the oclif-only script into `dir` and returns its path. */
export function writeOclifOnlyScript(dir: string): string {
  const script = path.join(dir, 'oclif-only.mjs')
  writeFileSync(
    script,
    `import {installSecretGuard} from ${JSON.stringify(dist('secret-guard.js'))}\ninstallSecretGuard()\n` +
      `const main = await import(${JSON.stringify(dist('main.js'))})\nawait main.runPooltool(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'bin', 'run.js')).href)})\n`,
  )
  return script
}

/** Runs `node script ...argv` with exactly `env`. */
export function runScript(script: string, argv: readonly string[], env: NodeJS.ProcessEnv): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...argv], {env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
  })
}
