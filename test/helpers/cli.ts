/**
 * Run the built CLI (bin/run.js → dist/) as a user would: a separate process,
 * real stdout/stderr/exit code. `npm test` builds first.
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BIN = path.join(REPO_ROOT, 'bin', 'run.js')

export interface CliRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  env?: Record<string, string | undefined>
  timeoutMs?: number
  /** Send SIGINT after this many ms (Ctrl-C). */
  interruptAfterMs?: number
  /** Send SIGINT once stderr or stdout matches. */
  interruptWhen?: RegExp
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {...process.env, POOLTOOL_URI: undefined, MONGODB_URI: undefined, FORCE_COLOR: '0', ...options.env}
    for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
    const child = spawn(process.execPath, [BIN, ...args], {cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    let interrupted = false
    const interrupt = () => {
      if (interrupted) return
      interrupted = true
      child.kill('SIGINT')
    }
    const check = () => {
      if (options.interruptWhen && (options.interruptWhen.test(stderr) || options.interruptWhen.test(stdout))) interrupt()
    }
    child.stdout.on('data', (chunk) => { stdout += chunk; check() })
    child.stderr.on('data', (chunk) => { stderr += chunk; check() })
    const timers: NodeJS.Timeout[] = []
    if (options.interruptAfterMs !== undefined) timers.push(setTimeout(interrupt, options.interruptAfterMs))
    timers.push(setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`pooltool ${args.join(' ')} did not finish in ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 60_000))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      for (const timer of timers) clearTimeout(timer)
      resolve({code, signal, stdout, stderr})
    })
  })
}

/** Parse the JSON a `--json` run printed on stdout. */
export function parseJson<T = any>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.code}):\n${run.stdout}\nstderr:\n${run.stderr}`)
  }
}
