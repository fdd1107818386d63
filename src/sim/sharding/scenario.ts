/**
 * `dead-lock-holder`: a process takes a distributed lock and dies without unlocking.
 *
 * Database `scenario` (primary: the last shard) holds the sharded collection
 * `scenario.orders`. That shard's primary locks the namespace, then crashes and restarts:
 * - 4.4: the lock was taken for a chunk split (why "splitting chunk [{ _id: MinKey }, { _id: MaxKey })
 *   in scenario.orders") under the shard's `host:port:epoch:random` process id. The restarted
 *   shard pings under a new id, so the holder's ping document stops moving: after the
 *   expiry (15 min × time scale) `locks list` calls it stale, and a DDL on the namespace
 *   overtakes it once the config server has watched the ping stay put for that long.
 * - 6.0: the shard's drop coordinator held it (why "dropCollection", process = shard name,
 *   ts 02000…). The restarted shard keeps pinging under the same name with a new term, so
 *   the lock never looks stale; any shard's coordinator overtakes it at once because all
 *   shards share the lock session id (and the holder's own step-up recovery frees it).
 * - 7.0: DDL locks live in memory and die with their process: nothing is left behind.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {ObjectId} from 'bson'
import {DEAD_LOCK_HOLDER, type FiredScenario, SCENARIOS, UPGRADED_FROM_34} from '../types.js'
import {CONFIG_SERVER_PROCESS_ID} from './dist-lock.js'
import type {ShardedCluster} from './state.js'

export {DEAD_LOCK_HOLDER, SCENARIOS, UPGRADED_FROM_34} from '../types.js'
export const SCENARIO_DB = 'scenario'
export const SCENARIO_NS = 'scenario.orders'

export function validateScenarios(names: readonly string[], topology: string, versionProfile: string): void {
  for (const n of names) {
    if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario '${n}' (known: ${SCENARIOS.join(', ')})`)
    if (topology !== 'sharded') throw new Error(`scenario '${n}' needs --topology sharded`)
    if (n === UPGRADED_FROM_34 && versionProfile !== '4.4') throw new Error(`scenario '${n}' needs --version-profile 4.4 (the lock lives in config.locks, which 4.4 still uses)`)
  }
}

/** What a scenario reports when it has fired: the announcement's sentence and its facts. */
export type ScenarioOutcome = Pick<FiredScenario, 'summary' | 'facts'>

/** How long before the cluster's start the 3.4 → 3.6 upgrade happened in `upgraded-from-3.4`. */
const UPGRADE_AGE_MS = 3 * 365 * 24 * 3600 * 1000

/**
 * `upgraded-from-3.4`: a 4.4 cluster whose config server was once a 3.4 CSRS. The 3.4 balancer
 * took the `balancer` lock as "ConfigServer" at every step-up and held it for good; 3.6+ no
 * longer takes it (the manual: "Starting in version 3.6, the balancer no longer takes a lock"),
 * and nothing frees it, so the document stays, held, from the day of the upgrade (the manual's
 * config.locks example shows it, dated 2018). Dated here relative to the cluster's start.
 */
export function seedUpgradedFrom34(cluster: ShardedCluster, startedAt: Date): ScenarioOutcome {
  const when = new Date(startedAt.getTime() - UPGRADE_AGE_MS)
  cluster.configCollection('locks').insert({
    _id: 'balancer',
    state: 2,
    ts: ObjectId.createFromTime(Math.floor(when.getTime() / 1000)),
    who: 'ConfigServer:Balancer',
    process: CONFIG_SERVER_PROCESS_ID,
    when,
    why: 'CSRS Balancer',
  })
  return {
    summary: `config.locks holds the 3.4 balancer lock ('balancer', state 2, process ${CONFIG_SERVER_PROCESS_ID}) taken ${when.toISOString()}, when the cluster ran 3.4; 3.6+ never frees it`,
    facts: {namespace: 'config.locks', lock: 'balancer', process: CONFIG_SERVER_PROCESS_ID, when: when.toISOString()},
  }
}

export async function runDeadLockHolder(cluster: ShardedCluster): Promise<ScenarioOutcome> {
  const holder = cluster.shards[cluster.shards.length - 1]
  const rt = cluster.runtime(holder.proc)
  cluster.insertDatabaseEntry(SCENARIO_DB, holder.name)
  const orders = holder.proc.data.collection(SCENARIO_DB, 'orders', true)!
  for (let i = 1; i <= 3; i++) orders.insert({_id: i, item: `order-${i}`, qty: i})
  const uuid = orders.uuid
  const entry: Record<string, unknown> = {_id: SCENARIO_NS, lastmodEpoch: new ObjectId(), lastmod: new Date(), key: {_id: 1}, unique: false, uuid}
  if (cluster.profile.name === '4.4') entry.dropped = false
  cluster.configCollection('collections').insert(entry)
  if (!rt.dist) {
    return {
      summary: `${SCENARIO_NS} was created on ${holder.name}; no lock was left behind: this version keeps DDL locks in the holder's memory, so a crashed holder frees them`,
      facts: {namespace: SCENARIO_NS, shard: holder.name},
    }
  }
  const why =
    cluster.lockModel === 'dist-4.4' ? `splitting chunk [{ _id: MinKey }, { _id: MaxKey }) in ${SCENARIO_NS}` : 'dropCollection'
  const lockProcess = rt.dist.processId
  rt.dist.grabForScenario(SCENARIO_NS, why, `${lockProcess}:conn7`)
  // The crash: no unlock, the pinger stops; the listener goes down and comes back as a new instance.
  rt.dist.crash()
  await holder.proc.stop()
  await sleep(20)
  await holder.proc.resume()
  cluster.checkRestarts()
  const pingsAs = cluster.runtime(holder.proc).dist?.processId ?? lockProcess
  const after =
    pingsAs === lockProcess
      ? `it came back pinging as ${pingsAs} again, so the lock never looks stale`
      : `it came back pinging as ${pingsAs}, so ${lockProcess}'s ping stops moving and the lock goes stale after the expiry`
  return {
    summary: `${holder.name}'s primary ${holder.proc.hostPort} took the distributed lock on ${SCENARIO_NS} (why "${why}") as process ${lockProcess} and crashed without unlocking; ${after}`,
    facts: {namespace: SCENARIO_NS, holder: holder.proc.hostPort, shard: holder.name, lockProcess, pingsAs, why},
  }
}

