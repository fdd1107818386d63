/**
 * The fault matrix's one move: run the built CLI, wait until it has reached a state
 * (an output line, or a figure on the server), inject one fault into the embedded
 * cluster, and let the command end on its own. Never a fixed sleep: the trigger is
 * what the command or the server shows.
 */
import assert from 'node:assert/strict'
import type {ChildProcess} from 'node:child_process'
import {EventEmitter} from 'node:events'

import {MongoClient, type Document} from 'mongodb'

import {type SimCluster, type SimFault, type SimTrigger} from '../../src/sim/index.js'
import {runCli, type CliRun} from './cli.js'
import {runInProcess} from './in-process.js'

/**
 * When to inject: an output line of the command, a server figure crossing a mark (both seen
 * by this test process), or `armed`: the cluster fires the fault itself once a process has
 * served so many operations of the command's — the one trigger a loaded machine cannot make
 * late, since it moves with the command's own work. Prefer it for commands with a short --duration.
 */
export type Trigger = {output: RegExp} | {server: () => Promise<boolean>} | {armed: SimTrigger}

export interface FaultRun {
  run: CliRun
  /** ms from spawn to the end of the run. */
  elapsedMS: number
}

const POLL_MS = 50

/**
 * Runs `pooltool …args`, injects `fault` (or calls `inject`) once `trigger` holds,
 * and resolves when the command has ended on its own. Fails the test when the
 * command ended before the trigger: the fault never hit the run.
 */
export async function runWithFault(
  sim: SimCluster,
  args: string[],
  trigger: Trigger,
  fault: SimFault | (() => Promise<void>),
  options: {timeoutMs?: number; inProcess?: boolean} = {},
): Promise<FaultRun> {
  const started = performance.now()
  // inProcess (test/helpers/in-process.ts): the same command path without a process start; its output is
  // seen as it is written, as a spawned child's streams are.
  let output = ''
  const seen = (chunk: unknown) => (output += String(chunk))
  const launch = () =>
    options.inProcess
      ? withinTime(runInProcess(args, {onOutput: seen}), args, options.timeoutMs ?? 40_000)
      : runCli(args, {
          timeoutMs: options.timeoutMs ?? 40_000,
          onSpawn: (child) => {
            child.stdout?.on('data', seen)
            child.stderr?.on('data', seen)
          },
        })
  if ('armed' in trigger) {
    if (typeof fault === 'function') throw new Error('an armed trigger fires a SimFault inside the cluster, not a function')
    const armed = await sim.armFault(fault, trigger.armed)
    const run = await launch()
    const fired = await armed.disarm()
    assert.ok(fired, `the command ended before ${trigger.armed.host} served ${trigger.armed.grows} ${trigger.armed.opcounter} operations:\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)
    return {run, elapsedMS: performance.now() - started}
  }
  let ended = false
  let injected = false
  const running = launch().finally(() => {
    ended = true
  })
  const inject = async () => {
    for (;;) {
      if (ended) return
      const reached = 'output' in trigger ? trigger.output.test(output) : await trigger.server().catch(() => false)
      if (reached) break
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
    if (ended) return
    if (typeof fault === 'function') await fault()
    else await sim.control(fault)
    injected = true
  }
  const [run] = await Promise.all([running, inject()])
  assert.ok(injected, `the command ended before the fault could be injected:\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)
  return {run, elapsedMS: performance.now() - started}
}

/** runCli's bound for an in-process run: the test fails instead of waiting on a command that never ends. */
function withinTime(run: Promise<CliRun>, args: string[], ms: number): Promise<CliRun> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`pooltool ${args.join(' ')} did not finish in ${ms} ms (in process)`)), ms)
  })
  return Promise.race([run, late]).finally(() => clearTimeout(timer))
}

/**
 * Runs `pooltool …args` in this process (test/helpers/in-process.ts) and hands `onSpawn` what a spawned run's
 * child would be to CliOutput (runCli's onSpawn): the output as 'data' (stdout and stderr as one, as CliOutput
 * reads them), 'close' once the command has returned, and kill(signal), which delivers the signal to the
 * handlers the running command installed (process.emit: the same handlers, without the operating system's
 * delivery; a spawned run of the same exit path proves that part). For open-ended commands stopped by Ctrl-C.
 */
export function runInProcessAttached(args: string[], onSpawn: (child: ChildProcess) => void, timeoutMs = 40_000): Promise<CliRun> {
  const stdout = new EventEmitter()
  const child = Object.assign(new EventEmitter(), {
    stdout,
    stderr: new EventEmitter(),
    kill: (signal: NodeJS.Signals = 'SIGTERM') => process.emit(signal, signal),
  })
  onSpawn(child as unknown as ChildProcess)
  return withinTime(runInProcess(args, {onOutput: (text) => stdout.emit('data', text)}), args, timeoutMs).finally(() => child.emit('close'))
}

/**
 * A trigger that holds once `figure(serverStatus)` grew by `by` since its first reading.
 * `client` stays open across the run (a new client per reading would itself move the
 * auth counters); a fault that drops its connection only costs a reading.
 */
export function serverFigureGrew(client: MongoClient, figure: (status: Document) => number, by: number): {server: () => Promise<boolean>} {
  let baseline: number | undefined
  return {
    server: async () => {
      const now = figure(await client.db('admin').command({serverStatus: 1}))
      baseline ??= now
      return now - baseline >= by
    },
  }
}

/** A long-lived observer client for triggers, directly on one host. */
export function observer(uri: string): MongoClient {
  return new MongoClient(uri, {directConnection: true, serverSelectionTimeoutMS: 2000, maxPoolSize: 1, appName: 'fault-matrix-observer'})
}

/** The same URI with another user. */
export function withUser(uri: string, user: string, password: string): string {
  const rest = uri.replace(/^mongodb:\/\/([^@/]*@)?/, '')
  return `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${rest}`
}

export function sum(record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0)
}
