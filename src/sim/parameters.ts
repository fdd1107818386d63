/**
 * Server parameters (getParameter / setParameter) of one simulated process, as a table a
 * later topology can extend (e.g. the ShardingTaskExecutorPool* parameters on mongos).
 */
import {CommandError} from './errors.js'
import {isNumeric, toNumber} from './storage/values.js'

export interface ParameterDef {
  get(): unknown
  /** Absent: read-only at runtime. */
  set?(value: unknown): void
}

export class ServerParameters {
  private readonly defs = new Map<string, ParameterDef>()

  define(name: string, def: ParameterDef): void {
    this.defs.set(name, def)
  }

  has(name: string): boolean {
    return this.defs.has(name)
  }

  names(): string[] {
    return [...this.defs.keys()]
  }

  get(name: string): unknown {
    return this.defs.get(name)?.get()
  }

  /** Sets a runtime parameter; returns the previous value. */
  set(name: string, value: unknown): unknown {
    const def = this.defs.get(name)
    if (!def) throw new CommandError(72, `attempted to set unrecognized parameter [${name}], use help:true to see options `)
    if (!def.set) throw new CommandError(72, `not allowed to change [${name}] at runtime`)
    const was = def.get()
    def.set(value)
    return was
  }
}

/** An integer parameter with mongod's bound-checking message. */
export function intParameter(name: string, read: () => number, write: (n: number) => void, min: number, max = 2 ** 31 - 1): ParameterDef {
  return {
    get: read,
    set(value) {
      if (!isNumeric(value) || !Number.isInteger(toNumber(value))) {
        throw new CommandError(14, `Invalid value for parameter ${name}: ${String(value)} is not a number`)
      }
      const n = toNumber(value)
      if (n < min) throw new CommandError(2, `Invalid value for parameter ${name}: ${n} is not greater than or equal to ${min}`)
      if (n > max) throw new CommandError(2, `Invalid value for parameter ${name}: ${n} is not less than or equal to ${max}`)
      write(n)
    },
  }
}
