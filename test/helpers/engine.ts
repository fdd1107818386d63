/** A bench engine plan and hooks for unit tests of src/bench/engine.ts: small defaults, the error's message as its class. */
import type {EngineHooks, EnginePlan} from '../../src/bench/engine.js'

export const plan = (overrides: Partial<EnginePlan>): EnginePlan => ({
  concurrency: 4,
  warmupMs: 0,
  drainTimeoutMs: 2000,
  tickIntervalMs: 1000,
  ...overrides,
})

export const hooks = (execute: () => Promise<unknown>, signal = new AbortController().signal): EngineHooks => ({
  execute,
  classifyError: (error: unknown) => (error as Error).message,
  signal,
})
