/** Fault state of one simulated process and the helpers the request path uses. */
import {setTimeout as sleep} from 'node:timers/promises'

import {CommandError} from './errors.js'
import {waitUnlessWoken} from './wait-unless-woken.js'
import type {SimFault, SimOptions} from './types.js'

export interface FaultState {
  latencyMs: number
  setupCostMs: number
  maxIncomingConnections: number
  /** epoch ms until which every reply is held (0: none) */
  stallUntil: number
  /** Wakes the replies a stall holds (a `recover` ends it early). */
  readonly stallWaiters: Set<() => void>
}

export function initialFaultState(options: SimOptions): FaultState {
  return {
    latencyMs: options.latencyMs,
    setupCostMs: options.setupCostMs,
    maxIncomingConnections: options.maxIncomingConnections,
    stallUntil: 0,
    stallWaiters: new Set(),
  }
}

/**
 * The service time a `latency` fault adds, as interruptible work under the operation's time limit:
 * a real server checks an operation's deadline at its interrupt points and, once `maxTimeMS` has
 * passed, stops it and answers MaxTimeMSExpired (50, "operation exceeded time limit";
 * `OperationContext::checkForInterrupt`, src/mongo/db/operation_context.cpp), keeping the connection.
 * `startedAt` is the operation's start (performance.now()); a limit of 0 or none means no limit.
 * (A `stall` is not interruptible: it holds replies whatever their limit, as a stuck process does.)
 */
export async function serviceTimeWithin(latencyMs: number, maxTimeMS: number | undefined, startedAt: number): Promise<void> {
  if (!maxTimeMS) return sleep(latencyMs)
  const left = startedAt + maxTimeMS - performance.now()
  if (latencyMs < left) return sleep(latencyMs)
  await sleep(Math.max(0, left))
  throw CommandError.of('MaxTimeMSExpired', 'operation exceeded time limit')
}

/** Resolves when no stall is in force (stalls extended meanwhile are honoured, one ended early by `endStall` is not). */
export async function waitOutStall(state: FaultState): Promise<void> {
  for (;;) {
    const left = state.stallUntil - Date.now()
    if (left <= 0) return
    await waitUnlessWoken(left, state.stallWaiters)
  }
}

/** Ends the stall in force now: the replies it holds go out. */
export function endStall(state: FaultState): void {
  state.stallUntil = 0
  for (const wake of [...state.stallWaiters]) wake()
}

/** Does a fault target this process? `hosts` lists "host:port" names; absent means all. */
export function faultTargets(fault: SimFault, hostPort: string): boolean {
  return !fault.hosts || fault.hosts.length === 0 || fault.hosts.includes(hostPort)
}
