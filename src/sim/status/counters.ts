/** The counters one simulated process keeps for serverStatus (reset on restart). */
import type {ScramMechanism} from '../../wire/index.js'

export type OpCounter = 'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command'

export interface MechanismCounters {
  speculativeAuthenticate: {received: number; successful: number}
  authenticate: {received: number; successful: number}
}

function mech(): MechanismCounters {
  return {speculativeAuthenticate: {received: 0, successful: 0}, authenticate: {received: 0, successful: 0}}
}

export class ServerCounters {
  readonly startedAt = Date.now()
  readonly startedHr = process.hrtime.bigint()
  readonly opcounters: Record<OpCounter, number> = {insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0}
  readonly commands = new Map<string, {total: number; failed: number}>()
  unknownCommands = 0
  bytesIn = 0
  bytesOut = 0
  numRequests = 0
  totalCreated = 0
  /** Kept even when the profile does not report `connections.rejected`. */
  rejected = 0
  saslSupportedMechsReceived = 0
  readonly auth: Record<ScramMechanism, MechanismCounters> = {'SCRAM-SHA-1': mech(), 'SCRAM-SHA-256': mech()}

  command(name: string, failed: boolean): void {
    let c = this.commands.get(name)
    if (!c) {
      c = {total: 0, failed: 0}
      this.commands.set(name, c)
    }
    c.total++
    if (failed) c.failed++
  }
}
