/**
 * Run the built CLI (bin/run.js → dist/) as a user would: a separate process,
 * real stdout/stderr/exit code. `npm test` builds first.
 */
import {type ChildProcess, spawn} from 'node:child_process'
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
  /** Which signal the interrupt sends (default SIGINT: Ctrl-C). */
  interruptSignal?: NodeJS.Signals
  /** Signals to send, in order, each once its pattern matches stderr or stdout (after the previous one was sent). */
  signalWhen?: Array<[RegExp, NodeJS.Signals]>
  /** Working directory of the spawned process (default: the repository). */
  cwd?: string
  /** The spawned process, for tests that signal it when a server state is reached. */
  onSpawn?(child: ChildProcess): void
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {...process.env, POOLTOOL_URI: undefined, MONGODB_URI: undefined, FORCE_COLOR: '0', ...options.env}
    for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
    const child = spawn(process.execPath, [BIN, ...args], {cwd: options.cwd ?? REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
    options.onSpawn?.(child)
    let stdout = ''
    let stderr = ''
    let interrupted = false
    const interrupt = () => {
      if (interrupted) return
      interrupted = true
      child.kill(options.interruptSignal ?? 'SIGINT')
    }
    const pending = [...(options.signalWhen ?? [])]
    const check = () => {
      if (options.interruptWhen && (options.interruptWhen.test(stderr) || options.interruptWhen.test(stdout))) interrupt()
      while (pending.length > 0 && (pending[0]![0].test(stderr) || pending[0]![0].test(stdout))) child.kill(pending.shift()![1])
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

/**
 * Run the CLI as `pooltool … | head -c BYTES` would: stdout is closed once that much has been read,
 * while the rest is still coming. Resolves with the exit code, the bytes read and stderr.
 */
export function runCliClosingStdoutAfter(args: string[], bytes: number): Promise<{code: number | null; read: number; stderr: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO_ROOT,
      env: {...process.env, POOLTOOL_URI: undefined, MONGODB_URI: undefined, FORCE_COLOR: '0'},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    let read = 0
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdout.on('data', (chunk: Buffer) => {
      read += chunk.length
      if (read >= bytes) child.stdout.destroy()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({code, read, stderr}))
  })
}
