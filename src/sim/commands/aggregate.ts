/** aggregate, including the `$currentOp` source stage on admin. */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import {runPipeline, stageName} from '../storage/aggregate.js'
import {currentOpDocuments} from '../status/currentOp.js'
import {isPlainObject} from '../storage/values.js'
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

function aggregate(ctx: CommandContext): Document {
  const {cmd, proc} = ctx
  const pipeline = pipelineOf(cmd)
  if (!isPlainObject(cmd.cursor) && !truthyFlag(cmd.explain)) {
    throw new CommandError(9, "The 'cursor' option is required, except for aggregate with the explain argument")
  }
  const batchSize = isPlainObject(cmd.cursor) ? nonNegative(cmd.cursor, 'batchSize') : undefined
  for (let i = 0; i < pipeline.length; i++) {
    const name = stageName(pipeline[i])
    if (name === '$currentOp' && i > 0) throw new CommandError(40602, '$currentOp is only valid as the first stage in a pipeline')
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

export const aggregateCommands: CommandSpec[] = [{name: 'aggregate', handler: aggregate, authz: aggregateAuthz, currentOpType: 'command'}]
