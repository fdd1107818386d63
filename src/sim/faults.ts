/** Fault state of one simulated process and the helpers the request path uses. */
import type {SimFault, SimOptions} from './types.js'

export interface FaultState {
  latencyMs: number
  setupCostMs: number
  maxIncomingConnections: number
  /** epoch ms until which every reply is held (0: none) */
  stallUntil: number
}

export function initialFaultState(options: SimOptions): FaultState {
  return {
    latencyMs: options.latencyMs,
    setupCostMs: options.setupCostMs,
    maxIncomingConnections: options.maxIncomingConnections,
    stallUntil: 0,
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Resolves when no stall is in force (stalls extended meanwhile are honoured). */
export async function waitOutStall(state: FaultState): Promise<void> {
  for (;;) {
    const left = state.stallUntil - Date.now()
    if (left <= 0) return
    await sleep(left)
  }
}

/** Does a fault target this process? `hosts` lists "host:port" names; absent means all. */
export function faultTargets(fault: SimFault, hostPort: string): boolean {
  return !fault.hosts || fault.hosts.length === 0 || fault.hosts.includes(hostPort)
}
