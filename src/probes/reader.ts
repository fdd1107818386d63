/**
 * The read layer: the only code that sends monitoring and inspection commands
 * to a server (hello, buildInfo, hostInfo, getCmdLineOpts, replSetGetConfig, serverStatus, connPoolStats,
 * $currentOp, lockInfo, listShards, getShardMap, getParameter, listCollections and the
 * `config.*` collections). Features (bench's sampler, conns, locks, auth, a
 * snapshot capture) read through a ServerReader and never call the driver's
 * `.command()` / `.find()` / `.aggregate()` against server state themselves.
 *
 * Every read returns a `Reading`: the parsed value, the raw reply, and the
 * server's own clock from that same reply (`localTime`, else `operationTime`),
 * so ages are judged on the server's clock, never the machine's. A recorder,
 * when given, sees every read and every failure: that is what a snapshot
 * records.
 *
 * A reader talks to one `CommandChannel`: a driver client (driver-channel.ts)
 * or pooltool's own wire client (wire-channel.ts: auth's driver-free path).
 */
import {EJSON} from 'bson'

import type {Document} from '../mongo/driver.js'
import {serverStatusCommand, type ServerStatusSection} from './server-status.js'

/** Bounds for one read: abort it, or let the server give up after `maxTimeMS`. */
export interface ReadOptions {
  signal?: AbortSignal
  maxTimeMS?: number
}

/** What a channel is asked for one read: the bounds, and whether to keep every BSON number type. */
export interface ChannelReadOptions extends ReadOptions {
  /**
   * Int32, Int64 and Double stay BSON objects instead of becoming JS numbers (the driver's
   * promoteValues/promoteLongs off): a recorder (a snapshot) keeps the types the server sent.
   */
  typed?: boolean
}

export interface HelloOptions extends ReadOptions {
  /** "<authSource>.<user>": the reply lists that user's mechanisms (`saslSupportedMechs`). */
  saslSupportedMechs?: string
}

/** Something that runs commands on one server (or one deployment, for a URI with several routers). */
export interface CommandChannel {
  /** The address reads go to, as the user or discovery named it ("host:port"). */
  readonly host: string
  command(db: string, command: Document, options?: ChannelReadOptions): Promise<Document>
  /** All documents of a query (cursor drained). Channels that cannot (a bare wire connection) omit it. */
  find?(db: string, collection: string, filter: Document, options?: ChannelReadOptions): Promise<Document[]>
  /** All documents of an aggregation (cursor drained). */
  aggregate?(db: string, pipeline: Document[], options?: ChannelReadOptions): Promise<Document[]>
}

/** One read of server state. */
export interface Reading<T> {
  /** The address that answered (the channel's). */
  host: string
  value: T
  /** The reply as the server sent it (documents, for a query). */
  raw: Document | Document[]
  /** The server's clock from the same reply, when the reply carries one. */
  serverTime?: Date
  /** The machine's clock when the reply arrived. */
  receivedAt: Date
  durationMS: number
}

/** What a recorder sees: every read, answered or failed. */
export interface ReadEvent {
  host: string
  /** `hello`, `serverStatus`, `config.locks`, `$currentOp` … */
  name: string
  request: Document
  reply?: Document | Document[]
  error?: {name: string; message: string; code?: number; codeName?: string}
  receivedAt: Date
  durationMS: number
}

export type ReadRecorder = (event: ReadEvent) => void

/** The server's clock in a reply: `localTime` (hello, serverStatus), else `operationTime` (seconds). */
export function serverTimeOf(reply: Document | undefined): Date | undefined {
  const local = reply?.localTime
  if (local instanceof Date && !Number.isNaN(local.getTime())) return local
  const operationTime = reply?.operationTime as {getHighBits?: () => number; high?: number} | undefined
  const seconds = typeof operationTime?.getHighBits === 'function' ? operationTime.getHighBits() : operationTime?.high
  return typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000) : undefined
}

/** A typed reply as the driver would have given it by default: Int32 and Double as numbers, Int64 as a number when it is safe. */
function promoteNumbers<T extends Document | Document[]>(reply: T): T {
  return EJSON.deserialize(EJSON.serialize(reply, {relaxed: false}), {relaxed: true}) as T
}

function describeError(error: unknown): NonNullable<ReadEvent['error']> {
  const e = error as {name?: string; message?: string; code?: unknown; codeName?: unknown}
  return {
    name: e?.name ?? 'Error',
    message: e?.message ?? String(error),
    ...(typeof e?.code === 'number' ? {code: e.code} : {}),
    ...(typeof e?.codeName === 'string' ? {codeName: e.codeName} : {}),
  }
}

/** `$currentOp` options pooltool uses. */
export interface CurrentOpOptions {
  allUsers?: boolean
  idleConnections?: boolean
  /** On a mongos: only the router's own operations. */
  localOps?: boolean
  /** Idle sessions are not connections: a reader counting connections switches them off. Server default: true. */
  idleSessions?: boolean
  /** Stages after `$currentOp` ($match, $group …), run on the server. */
  pipeline?: Document[]
}

export type ConfigCollection = 'locks' | 'lockpings' | 'mongos' | 'shards' | 'databases' | 'collections' | 'version'

const COMMAND_NOT_FOUND = 59

export class ServerReader {
  constructor(
    readonly channel: CommandChannel,
    private readonly recorder?: ReadRecorder,
  ) {}

  get host(): string {
    return this.channel.host
  }

  /**
   * Run one read, time it, take the server's clock from its reply, and tell the recorder. With a
   * recorder the reply is read with its number types kept (what the recorder stores), and the
   * features get the same reply with the driver's usual JS numbers.
   */
  private async read<T>(
    name: string,
    request: Document,
    send: (typed: boolean) => Promise<Document | Document[]>,
    parse: (raw: Document | Document[]) => T,
  ): Promise<Reading<T>> {
    const started = performance.now()
    const typed = this.recorder !== undefined
    let reply: Document | Document[]
    try {
      reply = await send(typed)
    } catch (error) {
      this.recorder?.({host: this.host, name, request, error: describeError(error), receivedAt: new Date(), durationMS: performance.now() - started})
      throw error
    }
    const receivedAt = new Date()
    const durationMS = performance.now() - started
    this.recorder?.({host: this.host, name, request, reply, receivedAt, durationMS})
    const raw = typed ? promoteNumbers(reply) : reply
    const serverTime = Array.isArray(raw) ? undefined : serverTimeOf(raw)
    return {host: this.host, value: parse(raw), raw, ...(serverTime ? {serverTime} : {}), receivedAt, durationMS}
  }

  private command(name: string, db: string, command: Document, options?: ReadOptions): Promise<Reading<Document>> {
    const request = options?.maxTimeMS === undefined ? command : {...command, maxTimeMS: options.maxTimeMS}
    return this.read(name, request, (typed) => this.channel.command(db, request, {signal: options?.signal, typed}), (raw) => raw as Document)
  }

  /** `saslSupportedMechs: "<db>.<user>"` also asks which SCRAM mechanisms that user has (auth picks what to measure from it). */
  async hello(options?: HelloOptions): Promise<Reading<Document>> {
    const {saslSupportedMechs, ...bounds} = options ?? {}
    const extra = saslSupportedMechs === undefined ? {} : {saslSupportedMechs}
    try {
      return await this.command('hello', 'admin', {hello: 1, ...extra}, bounds)
    } catch (error) {
      // `hello` arrived in 4.4.2 (and 5.0); 4.2 and early 4.4 answer CommandNotFound: ask the legacy name.
      if ((error as {code?: unknown})?.code !== COMMAND_NOT_FOUND) throw error
      return this.command('isMaster', 'admin', {isMaster: 1, ...extra}, bounds)
    }
  }

  buildInfo(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('buildInfo', 'admin', {buildInfo: 1}, options)
  }

  hostInfo(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('hostInfo', 'admin', {hostInfo: 1}, options)
  }

  /** The options the process was started with (`parsed`: the configuration as the server read it; `argv`). Needs clusterMonitor. */
  getCmdLineOpts(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('getCmdLineOpts', 'admin', {getCmdLineOpts: 1}, options)
  }

  /** The replica set's configuration (`config.members[]` with `hidden`, `arbiterOnly`, `priority`): hello lists no hidden member. Needs clusterMonitor. */
  replSetGetConfig(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('replSetGetConfig', 'admin', {replSetGetConfig: 1}, options)
  }

  /** serverStatus with only the sections asked for (the heavy default sections are excluded). */
  serverStatus(sections: readonly ServerStatusSection[], options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('serverStatus', 'admin', serverStatusCommand(sections), options)
  }

  /**
   * `lockInfo`: the lock manager's granted and pending requests per resource (mongod only: a mongos,
   * a role that may not run it, and a server or replay that does not know it refuse it).
   */
  lockInfo(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('lockInfo', 'admin', {lockInfo: 1}, options)
  }

  connPoolStats(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('connPoolStats', 'admin', {connPoolStats: 1}, options)
  }

  listShards(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('listShards', 'admin', {listShards: 1}, options)
  }

  getShardMap(options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('getShardMap', 'admin', {getShardMap: 1}, options)
  }

  getParameter(names: readonly string[], options?: ReadOptions): Promise<Reading<Document>> {
    return this.command('getParameter', 'admin', {getParameter: 1, ...Object.fromEntries(names.map((n) => [n, 1]))}, options)
  }

  /** The names of a database's collections that match `filter` (e.g. whether config.locks exists). */
  listCollections(db: string, filter: Document = {}, options?: ReadOptions): Promise<Reading<string[]>> {
    const request = {listCollections: 1, filter, nameOnly: true, authorizedCollections: true}
    return this.read(
      `${db}.listCollections`,
      request,
      (typed) => this.channel.command(db, request, {...options, typed}),
      (raw) => (((raw as Document).cursor?.firstBatch as Document[] | undefined) ?? []).map((c) => String(c.name)),
    )
  }

  /** Every document of a `config` collection matching `filter`. */
  config(collection: ConfigCollection, filter: Document = {}, options?: ReadOptions): Promise<Reading<Document[]>> {
    const find = this.channel.find
    if (!find) return Promise.reject(new Error(`${this.host}: this connection cannot read config.${collection}`))
    return this.read(`config.${collection}`, {find: collection, filter}, (typed) => find.call(this.channel, 'config', collection, filter, {...options, typed}), (raw) => raw as Document[])
  }

  /** `$currentOp` on the admin database, with any further stages. */
  currentOp(opts: CurrentOpOptions, options?: ReadOptions): Promise<Reading<Document[]>> {
    const aggregate = this.channel.aggregate
    if (!aggregate) return Promise.reject(new Error(`${this.host}: this connection cannot run $currentOp`))
    const stage: Document = {allUsers: opts.allUsers ?? true, idleConnections: opts.idleConnections ?? false}
    if (opts.localOps !== undefined) stage.localOps = opts.localOps
    if (opts.idleSessions !== undefined) stage.idleSessions = opts.idleSessions
    const pipeline = [{$currentOp: stage}, ...(opts.pipeline ?? [])]
    return this.read('$currentOp', {aggregate: 1, pipeline}, (typed) => aggregate.call(this.channel, 'admin', pipeline, {...options, typed}), (raw) => raw as Document[])
  }
}
