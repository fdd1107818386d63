/**
 * `$shardedDataDistribution` on a router (6.0.3+; mongosh's `sh.status()` prints it, and shows
 * `undefined` where it fails). The server desugars the stage (document_source_sharded_data_distribution.cpp)
 * into `$_internalAllCollectionStats` on every shard, grouped by namespace, kept when config.collections
 * has the namespace: one `{ns, shards: [{shardName, numOrphanedDocs, numOwnedDocuments, ownedSizeBytes,
 * orphanedSizeBytes}]}` per sharded collection, a shard listed where the collection exists locally.
 * The sizes are `avgObjSize × count` ($multiply), so null on a shard where the collection is empty
 * (no avgObjSize). The sim has no orphans (no migrations): numOrphanedDocs is 0.
 */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import {isNumeric, toNumber} from '../storage/values.js'
import {type ProcessRuntime, ShardedCluster} from './state.js'

export const SHARDED_DATA_DISTRIBUTION = '$shardedDataDistribution'

/** The stage's documents, or the errors a real router gives (before 6.0 the stage does not exist). */
export async function shardedDataDistribution(cluster: ShardedCluster, rt: ProcessRuntime, db: string, cmd: Document, spec: unknown): Promise<Document[]> {
  if (cluster.profile.maxWireVersion < 17) throw new CommandError(40324, `Unrecognized pipeline stage name: '${SHARDED_DATA_DISTRIBUTION}'`)
  if (spec === null || typeof spec !== 'object' || Object.keys(spec).length > 0) {
    throw new CommandError(6789100, 'The $shardedDataDistribution stage specification must be an empty object')
  }
  if (db !== 'admin' || cmd.aggregate !== 1) throw new CommandError(6789102, 'The $shardedDataDistribution stage must be run on the admin database')
  const sharded = [...(cluster.configData.collection('config', 'collections', false)?.docs.values() ?? [])]
    .filter((c) => typeof c._id === 'string' && c.dropped !== true)
    .map((c) => c._id as string)
  const out: Document[] = []
  for (const ns of sharded) {
    const dot = ns.indexOf('.')
    const shards: Document[] = []
    for (const shard of cluster.shards) {
      const r = await cluster.toShard(rt, shard, ns.slice(0, dot), {collStats: ns.slice(dot + 1)})
      if (r.ok !== 1) continue // not on this shard
      const count = isNumeric(r.count) ? toNumber(r.count) : 0
      const avg = count > 0 && isNumeric(r.avgObjSize) ? toNumber(r.avgObjSize) : null
      shards.push({shardName: shard.name, numOrphanedDocs: 0, numOwnedDocuments: count, ownedSizeBytes: avg === null ? null : avg * count, orphanedSizeBytes: avg === null ? null : 0})
    }
    if (shards.length > 0) out.push({ns, shards})
  }
  return out
}
