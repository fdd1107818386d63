/**
 * The ways of spreading M concurrent operations over connections, as mgo's users
 * had to choose them (one shared session, a session per operation, a fixed set):
 * - pool:   one client, the driver's pool (M:N, N ≤ maxPoolSize);
 * - single: one client, maxPoolSize 1 (M:1: every operation rides one connection);
 * - per-op: a new client per operation, with its own handshake and auth (the
 *           short-connection extreme; the client polls its server once, so it
 *           also opens one monitoring connection);
 * - fixed:  N dedicated connections used round robin (the article's session
 *           pool), built as N clients of maxPoolSize 1.
 */
import {type ClientSettings, createClient, type MongoClient} from '../mongo/client.js'
import type {PoolTelemetry} from '../mongo/pool-telemetry.js'
import type {BenchConfig, PoolModel} from './types.js'
import {type Handles, handlesFor, type Operation} from './workloads.js'

export interface ClientModel {
  /** Driver clients opened so far. */
  readonly clientsOpened: number
  open(): Promise<void>
  run(op: Operation): Promise<unknown>
  close(): Promise<void>
}

export interface ModelInput {
  model: PoolModel
  settings: ClientSettings
  config: BenchConfig
  concurrency: number
  maxPoolSize?: number
  telemetry: PoolTelemetry
}

/** One or more long-lived clients; operations go round robin over them. */
class LongLivedClients implements ClientModel {
  clientsOpened = 0
  private readonly clients: MongoClient[] = []
  private readonly handles: Handles[] = []
  private readonly detach: Array<() => void> = []
  private nextIndex = 0

  constructor(private readonly input: ModelInput, private readonly count: number, private readonly maxPoolSize: number | undefined) {}

  async open(): Promise<void> {
    for (let i = 0; i < this.count; i++) {
      const client = createClient({...this.input.settings, pool: {...this.input.settings.pool, maxPoolSize: this.maxPoolSize}})
      this.detach.push(this.input.telemetry.attach(client))
      this.clients.push(client)
      this.handles.push(handlesFor(client.db(this.input.config.db), this.input.config))
      this.clientsOpened += 1
    }
    await Promise.all(this.clients.map((client) => client.connect()))
  }

  run(op: Operation): Promise<unknown> {
    if (this.handles.length === 1) return op(this.handles[0]!)
    const handles = this.handles[this.nextIndex]!
    this.nextIndex = (this.nextIndex + 1) % this.handles.length
    return op(handles)
  }

  async close(): Promise<void> {
    const clients = this.clients.splice(0)
    await Promise.allSettled(clients.map((client) => client.close()))
    for (const stop of this.detach.splice(0)) stop()
  }
}

/** A fresh client for every operation: connect, handshake, auth, one operation, close. */
class ClientPerOperation implements ClientModel {
  clientsOpened = 0
  constructor(private readonly input: ModelInput) {}

  async open(): Promise<void> {
    // Fail fast on a bad target before the measured run starts.
    const probe = createClient(this.perOpSettings())
    try {
      await probe.connect()
    } finally {
      await probe.close()
    }
  }

  private perOpSettings(): ClientSettings {
    return {
      ...this.input.settings,
      pool: {...this.input.settings.pool, maxPoolSize: 1, minPoolSize: 0},
      // A short-lived client checks its server once; streaming would open a second (RTT) socket.
      extra: {...this.input.settings.extra, serverMonitoringMode: 'poll'},
    }
  }

  async run(op: Operation): Promise<unknown> {
    const client = createClient(this.perOpSettings())
    const detach = this.input.telemetry.attach(client)
    this.clientsOpened += 1
    try {
      return await op(handlesFor(client.db(this.input.config.db), this.input.config))
    } finally {
      await client.close()
      detach()
    }
  }

  async close(): Promise<void> {}
}

export function createClientModel(input: ModelInput): ClientModel {
  switch (input.model) {
    case 'pool':
      return new LongLivedClients(input, 1, input.maxPoolSize)
    case 'single':
      return new LongLivedClients(input, 1, 1)
    case 'fixed':
      return new LongLivedClients(input, input.maxPoolSize ?? input.concurrency, 1)
    case 'per-op':
      return new ClientPerOperation(input)
  }
}

/** The maxPoolSize a run really used, for the report (null: the driver's default). */
export function effectiveMaxPoolSize(model: PoolModel, maxPoolSize: number | undefined, concurrency: number): number | null {
  switch (model) {
    case 'pool':
      return maxPoolSize ?? null
    case 'single':
    case 'per-op':
      return 1
    case 'fixed':
      return maxPoolSize ?? concurrency
  }
}
