/** aggregate, including the `$currentOp` source stage on admin and `$collStats` on a collection. */
import {Long, type Document} from 'bson'
import {CommandError} from '../errors.js'
import type {SimProcess} from '../process.js'
import {shardNameOf} from '../sharding/state.js'
import {storageStatsOf} from './ddl.js'
import {runPipeline, stageName} from '../storage/aggregate.js'
import {currentOpDocuments} from '../status/currentOp.js'
import {isNumeric, isPlainObject, toNumber} from '../storage/values.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {clusterMonitor, nonNegative, readOn, truthyFlag} from './util.js'

function pipelineOf(cmd: Document): Document[] {
  if (!Array.isArray(cmd.pipeline)) throw new CommandError(40414, "BSON field 'aggregate.pipeline' is missing but a required field")
  return cmd.pipeline
}

function currentOpStage(cmd: Document): Document | undefined {
  const pipeline = cmd.pipeline
  if (!Array.isArray(pipeline) || pipeline.length === 0 || !isPlainObject(pipeline[0])) return undefined
  const first = pipeline[0]
  return '$currentOp' in first ? (isPlainObject(first.$currentOp) ? first.$currentOp : {}) : undefined
}

const COLL_STATS_OPTIONS = new Set(['latencyStats', 'storageStats', 'count', 'queryExecStats'])

function zeroLatency(): Document {
  const bucket = () => ({latency: Long.fromNumber(0), ops: Long.fromNumber(0)})
  return {reads: bucket(), writes: bucket(), commands: bucket(), transactions: bucket()}
}

/**
 * The one document `$collStats` produces on a mongod (the manual's $collStats output): `ns`, `host`,
 * `localTime`, and per option `latencyStats`, `storageStats` (scaled), `count`, `queryExecStats`; a
 * shard member adds `shard`, which is how a router's caller (mongosh `db.c.stats()`) tells shards apart.
 */
function collStatsDocument(proc: SimProcess, db: string, name: string, spec: unknown): Document {
  if (!isPlainObject(spec)) throw new CommandError(5447000, '$collStats must take a nested object')
  for (const k of Object.keys(spec)) {
    if (!COLL_STATS_OPTIONS.has(k)) throw new CommandError(40415, `BSON field '$collStats.${k}' is an unknown field.`)
  }
  const ns = `${db}.${name}`
  const coll = proc.data.collection(db, name, false)
  const doc: Document = {ns}
  const shard = shardNameOf(proc)
  if (shard) doc.shard = shard
  doc.host = proc.hostPort
  doc.localTime = new Date()
  if (spec.latencyStats !== undefined) doc.latencyStats = zeroLatency()
  if (spec.storageStats !== undefined) {
    if (!coll) throw new CommandError(26, `Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [${ns}] not found.`)
    const options = isPlainObject(spec.storageStats) ? spec.storageStats : {}
    const scale = isNumeric(options.scale) ? toNumber(options.scale) : 1
    if (!(scale >= 1)) throw new CommandError(2, 'scale has to be >= 1')
    doc.storageStats = storageStatsOf(coll, Math.trunc(scale))
  }
  if (spec.count !== undefined) {
    if (!coll) throw new CommandError(26, `Unable to retrieve count in $collStats stage :: caused by :: Collection [${ns}] not found.`)
    doc.count = coll.size
  }
  if (spec.queryExecStats !== undefined) doc.queryExecStats = {collectionScans: {total: Long.fromNumber(0), nonTailable: Long.fromNumber(0)}}
  return doc
}

function aggregate(ctx: CommandContext): Document {
  const {cmd, proc} = ctx
  const pipeline = pipelineOf(cmd)
  if (!isPlainObject(cmd.cursor) && !truthyFlag(cmd.explain)) {
    throw new CommandError(9, "The 'cursor' option is required, except for aggregate with the explain argument")
  }
  const batchSize = isPlainObject(cmd.cursor) ? nonNegative(cmd.cursor, 'batchSize') : undefined
  for (let i = 0; i < pipeline.length; i++) {
    const name = stageName(pipeline[i])
    if ((name === '$currentOp' || name === '$collStats') && i > 0) throw new CommandError(40602, `${name} is only valid as the first stage in a pipeline`)
    if (name === '$out' || name === '$merge') throw new CommandError(40324, `Unrecognized pipeline stage name: '${name}' (not simulated)`)
  }
  const opSpec = currentOpStage(cmd)
  let input: Document[]
  let ns: string
  let rest = pipeline
  if (opSpec) {
    if (ctx.db !== 'admin' || cmd.aggregate !== 1) {
      throw new CommandError(73, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
    }
    input = currentOpDocuments(proc, ctx.conn, {
      allUsers: truthyFlag(opSpec.allUsers),
      idleConnections: truthyFlag(opSpec.idleConnections),
      idleSessions: opSpec.idleSessions === undefined ? true : truthyFlag(opSpec.idleSessions),
      localOps: truthyFlag(opSpec.localOps),
    })
    ns = 'admin.$cmd.aggregate'
    rest = pipeline.slice(1)
  } else if (typeof cmd.aggregate === 'string' && pipeline.length > 0 && stageName(pipeline[0]) === '$collStats') {
    input = [collStatsDocument(proc, ctx.db, cmd.aggregate, (pipeline[0] as Document).$collStats)]
    ns = `${ctx.db}.${cmd.aggregate}`
    rest = pipeline.slice(1)
  } else if (typeof cmd.aggregate === 'string') {
    const coll = proc.data.collection(ctx.db, cmd.aggregate, false)
    input = coll ? [...coll.docs.values()] : []
    ns = `${ctx.db}.${cmd.aggregate}`
    proc.locks.read()
  } else {
    throw new CommandError(73, `Invalid namespace specified '${ctx.db}.${String(cmd.aggregate)}'`)
  }
  const docs = runPipeline(input, rest)
  return proc.cursors.open(ns, docs, batchSize, false, ctx.conn.id)
}

function aggregateAuthz(ctx: CommandContext) {
  const op = currentOpStage(ctx.cmd)
  if (op) return truthyFlag(op.allUsers) ? clusterMonitor() : null
  return readOn(ctx)
}

// pipeline_command.cpp: kOptIn for every pipeline, $currentOp included (pooltool's direct reads send primaryPreferred).
export const aggregateCommands: CommandSpec[] = [{name: 'aggregate', handler: aggregate, authz: aggregateAuthz, secondaryAllowed: 'optIn', currentOpType: 'command'}]
