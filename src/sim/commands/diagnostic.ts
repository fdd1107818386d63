/**
 * ping, buildInfo, hostInfo, getCmdLineOpts, getParameter, setParameter, serverStatus,
 * currentOp, killOp, whatsmyuri, connPoolStats, listCommands, getLog.
 */
import {arch, cpus, hostname, platform, release, totalmem} from 'node:os'
import {Long, type Document} from 'bson'
import {CommandError} from '../errors.js'
import {shardingStatusOf} from '../sharding/state.js'
import {buildServerStatus} from '../status/serverStatus.js'
import {currentOpDocuments} from '../status/currentOp.js'
import {isNumeric, isPlainObject, toNumber} from '../storage/values.js'
import {MAX_BSON_OBJECT_SIZE} from './hello.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {argumentNames, clusterAdmin, clusterMonitor, truthyFlag} from './util.js'

function ping(): Document {
  return {ok: 1}
}

function buildInfo(ctx: CommandContext): Document {
  const p = ctx.proc.profile
  return {
    version: p.version,
    gitVersion: p.gitVersion,
    modules: [],
    allocator: 'tcmalloc',
    javascriptEngine: 'mozjs',
    sysInfo: 'deprecated',
    versionArray: p.versionArray,
    openssl: {running: 'OpenSSL 3.0.2 15 Mar 2022', compiled: 'OpenSSL 3.0.2 15 Mar 2022'},
    buildEnvironment: {distmod: 'ubuntu2204', distarch: 'x86_64', target_arch: 'x86_64', target_os: 'linux'},
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    storageEngines: ['devnull', 'ephemeralForTest', 'wiredTiger'],
    ok: 1,
  }
}

/**
 * The open-files limit the simulated processes report (`hostInfo.extra.maxOpenFiles`, Linux; manual:
 * reference/command/hostInfo): 1048576, a common container `ulimit -n`. A real mongod caps its connections
 * at 80% of it (838860, as the published 4.4 serverStatus in test/fixtures/server-status.ts shows), above the
 * sim's net.maxIncomingConnections (65536 unless --max-connections says less), which is the limit it applies.
 */
export const SIM_MAX_OPEN_FILES = 1_048_576

function hostInfo(ctx: CommandContext): Document {
  return {
    system: {
      currentTime: new Date(),
      hostname: hostname(),
      cpuAddrSize: 64,
      memSizeMB: Long.fromNumber(Math.round(totalmem() / 1048576)),
      numCores: cpus().length,
      cpuArch: arch(),
      numaEnabled: false,
    },
    os: {type: platform() === 'linux' ? 'Linux' : platform(), name: 'pooltool simulated host', version: release()},
    // timeScale: how much the simulated cluster shrinks its internal intervals (lock ping, expiry).
    extra: {maxOpenFiles: SIM_MAX_OPEN_FILES, note: 'simulated by pooltool', timeScale: ctx.proc.options.timeScale},
    ok: 1,
  }
}

/**
 * The command line each process would have been started with: a router is `mongos --configdb
 * <configRS/hosts>` (parsed `sharding.configDB`), shard and config members add `--shardsvr` /
 * `--configsvr` (parsed `sharding.clusterRole`), as the manual's getCmdLineOpts and
 * mongos/mongod option pages describe.
 */
function getCmdLineOpts(ctx: CommandContext): Document {
  const {proc} = ctx
  const router = proc.role === 'mongos'
  const argv = [router ? 'mongos' : 'mongod']
  const parsed: Document = {}
  if (router) {
    const configDB = String(shardingStatusOf(proc)?.configsvrConnectionString ?? '')
    argv.push('--configdb', configDB)
    parsed.sharding = {configDB}
  }
  argv.push('--bind_ip', proc.options.host, '--port', String(proc.port), '--maxConns', String(proc.faults.maxIncomingConnections))
  parsed.net = {bindIp: proc.options.host, port: proc.port, maxIncomingConnections: proc.faults.maxIncomingConnections}
  if (proc.replSet) {
    argv.push('--replSet', proc.replSet.setName)
    parsed.replication = {replSet: proc.replSet.setName}
  }
  if (proc.role === 'shard' || proc.role === 'config') {
    argv.push(proc.role === 'shard' ? '--shardsvr' : '--configsvr')
    parsed.sharding = {clusterRole: proc.role === 'shard' ? 'shardsvr' : 'configsvr'}
  }
  if (proc.authEnabled) {
    argv.push('--auth')
    parsed.security = {authorization: 'enabled'}
  }
  return {argv, parsed, ok: 1}
}

function getParameter(ctx: CommandContext): Document {
  const {cmd, proc} = ctx
  const params = proc.parameters
  const all = cmd.getParameter === '*' || (isPlainObject(cmd.getParameter) && cmd.getParameter.allParameters === true)
  const out: Document = {}
  if (all) {
    for (const n of params.names()) out[n] = params.get(n)
  } else {
    for (const k of argumentNames(ctx)) if (params.has(k)) out[k] = params.get(k)
    if (Object.keys(out).length === 0) throw new CommandError(72, 'no option found to get')
  }
  out.ok = 1
  return out
}

function setParameter(ctx: CommandContext): Document {
  const {cmd, proc} = ctx
  const names = argumentNames(ctx)
  if (names.length === 0) throw new CommandError(2, 'no option found to set, use help:true to see options ')
  let was: unknown
  for (const n of names) {
    if (!proc.parameters.has(n)) throw new CommandError(72, `attempted to set unrecognized parameter [${n}], use help:true to see options `)
  }
  for (const n of names) was = proc.parameters.set(n, cmd[n])
  return {was, ok: 1}
}

function serverStatus(ctx: CommandContext): Document {
  const exclude = new Set<string>()
  for (const k of argumentNames(ctx)) {
    const v = ctx.cmd[k]
    if (v === 0 || v === false) exclude.add(k)
  }
  return buildServerStatus(ctx.proc, exclude)
}

function currentOp(ctx: CommandContext): Document {
  const {cmd} = ctx
  const all = cmd.$all === true
  const inprog = currentOpDocuments(ctx.proc, ctx.conn, {
    allUsers: cmd.$ownOps !== true,
    idleConnections: all,
    idleSessions: all,
    localOps: false,
  })
  const reply: Document = {inprog}
  // mongod says so at the top of currentOp while fsyncLock holds writes.
  if (ctx.proc.locks.fsyncLockDepth > 0) {
    reply.fsyncLock = true
    reply.info = 'use db.fsyncUnlock() to terminate the fsync write/snapshot lock'
  }
  reply.ok = 1
  return reply
}

function killOp(ctx: CommandContext): Document {
  const opid = ctx.cmd.op
  if (!isNumeric(opid)) throw new CommandError(2, 'Did not provide "op" field')
  const id = toNumber(opid)
  for (const c of ctx.proc.connections.values()) {
    if (c.op && c.op.opid === id) c.op.killed = true
  }
  return {info: 'attempting to kill op', ok: 1}
}

function whatsmyuri(ctx: CommandContext): Document {
  return {you: ctx.conn.remote, ok: 1}
}

/** mongod keeps no sharding pools in these topologies; mongos will override this command. */
function connPoolStats(): Document {
  return {
    numClientConnections: 0,
    numAScopedConnections: 0,
    totalInUse: 0,
    totalAvailable: 0,
    totalLeased: 0,
    totalCreated: 0,
    totalRefreshing: 0,
    totalRefreshed: 0,
    replicaSetMatchingStrategy: 'disabled',
    pools: {},
    hosts: {},
    replicaSets: {},
    ok: 1,
  }
}

function listCommands(ctx: CommandContext): Document {
  const commands: Document = {}
  for (const n of ctx.proc.registry.names().sort()) commands[n] = {help: '', requiresAuth: !ctx.proc.registry.lookup(n)!.noAuth}
  return {commands, ok: 1}
}

function getLog(ctx: CommandContext): Document {
  if (ctx.cmd.getLog === '*') return {names: ['global', 'startupWarnings'], ok: 1}
  return {totalLinesWritten: 0, log: [], ok: 1}
}

export const diagnosticCommands: CommandSpec[] = [
  {name: 'ping', handler: ping, noAuth: true},
  {name: 'buildInfo', aliases: ['buildinfo'], handler: buildInfo, noAuth: true},
  {name: 'hostInfo', handler: hostInfo, authz: clusterMonitor},
  {name: 'getCmdLineOpts', handler: getCmdLineOpts, authz: clusterMonitor},
  {name: 'getParameter', handler: getParameter, authz: clusterMonitor},
  {name: 'setParameter', handler: setParameter, authz: clusterAdmin},
  {name: 'serverStatus', handler: serverStatus, authz: clusterMonitor},
  {name: 'currentOp', handler: currentOp, authz: (ctx) => (truthyFlag(ctx.cmd.$ownOps) ? null : clusterMonitor())},
  {name: 'killOp', handler: killOp, authz: clusterAdmin},
  {name: 'whatsmyuri', handler: whatsmyuri, noAuth: true},
  {name: 'connPoolStats', handler: connPoolStats, authz: clusterMonitor},
  {name: 'listCommands', handler: listCommands, noAuth: true},
  {name: 'getLog', handler: getLog, authz: clusterMonitor},
]
