/**
 * One embedded cluster for a `describe` block: started before its first test,
 * stopped after its last, so a test file does not repeat the start/stop.
 *
 *   describe('conns watch', () => {
 *     const cluster = useCluster({topology: 'sharded'})
 *     it('…', async () => { await runCli(['conns', 'list', '--uri', cluster.uri]) })
 *   })
 */
import {after, before} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {type SimCluster, type SimOptions, startSimCluster} from '../../src/sim/index.js'

export interface ClusterHandle {
  /** The running cluster (available inside tests and hooks, not at describe time). */
  readonly sim: SimCluster
  /** Its connection string (with the sim's credentials when started with `auth: true`). */
  readonly uri: string
}

export function useCluster(options: Partial<SimOptions> = {}): ClusterHandle {
  let sim: SimCluster | undefined
  before(async () => {
    sim = await startSimCluster(options)
  })
  after(async () => {
    await sim?.stop()
  })
  const started = (): SimCluster => {
    if (!sim) throw new Error('useCluster: the cluster is used before its `before` hook ran (use it inside a test or hook)')
    return sim
  }
  return {
    get sim() {
      return started()
    },
    get uri() {
      return started().info.uri
    },
  }
}

/** The same, with one driver client on it for the test's own reads (opened lazily, closed after the block). */
export function useClusterClient(options: Partial<SimOptions> = {}): ClusterHandle & {readonly client: MongoClient} {
  let client: MongoClient | undefined
  // Registered before the cluster's own hook, so it runs first (after hooks run in the order they were added):
  // the client closes while its server still answers. Closed after the server stopped, the driver waits out
  // server selection (30 s) to end its sessions (test/cluster/start-barrier took 31 s for 0.3 s of tests).
  after(async () => {
    await client?.close()
  })
  const cluster = useCluster(options)
  return {
    get sim() {
      return cluster.sim
    },
    get uri() {
      return cluster.uri
    },
    get client() {
      client ??= new MongoClient(cluster.uri)
      return client
    },
  }
}
