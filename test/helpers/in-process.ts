/**
 * Run a pooltool command inside the test process, through the same path
 * bin/run.js takes (the secret guard, oclif's parsing, BaseCommand's error
 * lines and --json error objects, the exit code), without starting Node and
 * loading the CLI each time: the cases that check flag parsing and error lines
 * cost milliseconds instead of a process start. Output is captured from
 * process.stdout/stderr as written; the exit code is the failure's, else
 * process.exitCode. Runs are serialized (they share the process's streams,
 * environment and exit code). Only text is captured: a Buffer written to
 * stdout is the test runner's own report to its parent and passes through. Keep one spawned run (test/helpers/cli.ts) per
 * command and exit path: that is what proves the real process.
 */
import path from 'node:path'
import {pathToFileURL} from 'node:url'

import type {Config} from '@oclif/core'

import type {CliRun} from './cli.js'
import {REPO_ROOT} from './cli.js'

type Write = typeof process.stdout.write

interface Sink {
  stdout: string
  stderr: string
  /** The secret guard bin/run.js installs, for this invocation's URIs. */
  scrub(text: string): string
  /** Sees each piece of output as it is written (scrubbed), as a spawned child's stream listeners do. */
  onOutput?: (text: string) => void
}

let current: Sink | undefined
type Scrubber = (text: string) => string

interface Loaded {
  config: Config
  execute(argv: string[], dir: Config): Promise<number | undefined>
  scrubberFor(argv: readonly string[], env: NodeJS.ProcessEnv): Scrubber
}

let ready: Promise<Loaded> | undefined
let queue: Promise<unknown> = Promise.resolve()

/** stdout and stderr pass through here for good: to the run's sink while one runs, else to the real stream. */
function route(stream: NodeJS.WriteStream, key: 'stdout' | 'stderr'): void {
  const original = stream.write.bind(stream) as (...args: unknown[]) => boolean
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    // The test runner reports to its parent over this process's stdout in serialized Buffers, also while a
    // command runs (another test ending): those pass through. pooltool and oclif write text.
    if (!current || typeof chunk !== 'string') return original(chunk, ...rest)
    const text = current.scrub(chunk)
    current[key] += text
    current.onOutput?.(text)
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined
    callback?.()
    return true
  }) as Write
}

async function load(): Promise<Loaded> {
  route(process.stdout, 'stdout')
  route(process.stderr, 'stderr')
  // The built CLI, as bin/run.js loads it (npm test builds first).
  const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist/src/cli', file)).href
  const {runCommandsInProcess} = (await import(dist('process-owner.js'))) as {runCommandsInProcess(): void}
  runCommandsInProcess()
  const {executePooltool} = (await import(dist('main.js'))) as {executePooltool: (argv: string[], dir: Config) => Promise<number | undefined>}
  const guard = (await import(dist('secret-guard.js'))) as {makeScrubber(uris: readonly string[]): Scrubber; urisOfInvocation(argv: readonly string[], env: NodeJS.ProcessEnv): string[]}
  const {Config: OclifConfig} = await import('@oclif/core')
  const config = await OclifConfig.load(REPO_ROOT)
  return {config, execute: executePooltool, scrubberFor: (argv, env) => guard.makeScrubber(guard.urisOfInvocation(argv, env))}
}

export interface InProcessOptions {
  /** Overrides the environment for the run (undefined unsets). */
  env?: Record<string, string | undefined>
  /** Called with each piece of stdout or stderr as the command writes it (a trigger on an output line). */
  onOutput?: (text: string) => void
}

/** One invocation of `pooltool ...args`, in this process. */
export function runInProcess(args: string[], options: InProcessOptions = {}): Promise<CliRun> {
  const next = queue.then(() => runOne(args, options))
  queue = next.catch(() => undefined)
  return next
}

async function runOne(args: string[], options: InProcessOptions): Promise<CliRun> {
  ready ??= load()
  const {config, execute, scrubberFor} = await ready
  // As runCli: no URI from the developer's shell, no colour.
  const env: Record<string, string | undefined> = {POOLTOOL_URI: undefined, MONGODB_URI: undefined, FORCE_COLOR: '0', ...options.env}
  // NO_COLOR too: --no-color sets it for the whole process (BaseCommand), which here would outlive the run.
  const saved = new Map([...Object.keys(env), 'NO_COLOR'].map((key) => [key, process.env[key]]))
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
  const sink: Sink = {stdout: '', stderr: '', scrub: scrubberFor(args, process.env), onOutput: options.onOutput}
  current = sink
  process.exitCode = undefined
  try {
    const failed = await execute(args, config)
    return {code: failed ?? (typeof process.exitCode === 'number' ? process.exitCode : 0), signal: null, stdout: sink.stdout, stderr: sink.stderr}
  } finally {
    current = undefined
    process.exitCode = undefined
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
}
