/**
 * Conformance with a client nobody here wrote: mongosh, installed for these tests only from
 * test/conformance/package-lock.json (`npm ci --prefix test/conformance`), runs the helpers a user types —
 * CRUD with typed numbers, `db.c.stats()`, `db.serverStatus()`, `db.currentOp(true)`, both SCRAM
 * mechanisms, `sh.status()`, `rs.status()`, `rs.printReplicationInfo()` (test/conformance/mongosh/checks.js)
 * — against every topology × version profile, and must end cleanly with nothing on stderr and no warning.
 * Each cluster is started once and every check runs in one mongosh invocation, so the file stays
 * cheap on a 2-core CI.
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {existsSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'

import type {SimTopology, SimVersionProfile} from '../../src/sim/index.js'
import {REPO_ROOT} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'

const CONFORMANCE = path.join(REPO_ROOT, 'test/conformance')
const MONGOSH = path.join(CONFORMANCE, 'node_modules/.bin/mongosh')
const CHECKS = path.join(CONFORMANCE, 'mongosh/checks.js')

interface ShellRun {
  code: number | null
  stdout: string
  stderr: string
}

function mongosh(uri: string, env: Record<string, string>): Promise<ShellRun> {
  return new Promise((resolve) => {
    execFile(MONGOSH, [uri, '--quiet', '--norc', '--file', CHECKS], {env: {...process.env, ...env, MONGOSH_FORCE_DISABLE_TELEMETRY_FOR_TESTING: '1'}, maxBuffer: 16 << 20}, (error, stdout, stderr) =>
      resolve({code: error ? ((error as {code?: number}).code ?? null) : 0, stdout, stderr}),
    )
  })
}

/** The URI of one shard's replica set, with the cluster's credentials (rs.* run there, not on a router). */
function shardUri(clusterUri: string, hosts: string[], setName: string): string {
  const url = new URL(clusterUri)
  const auth = url.username ? `${url.username}:${url.password}@` : ''
  return `mongodb://${auth}${hosts.join(',')}/?replicaSet=${setName}&authSource=admin`
}

/** What mongosh prints when a helper met a command the server should have answered. */
const TROUBLE = /warn|deprecat|error|exception|not supported|unrecognized|\bunknown\b/i

const TOPOLOGIES: SimTopology[] = ['standalone', 'replset', 'sharded']
const PROFILES: SimVersionProfile[] = ['4.4', '6.0', '7.0']

describe('mongosh conformance', () => {
  it('mongosh is installed (npm ci --prefix test/conformance)', () => {
    assert.ok(existsSync(MONGOSH), 'mongosh is missing: run `npm ci --prefix test/conformance --no-audit --no-fund` (installs it for the conformance tests only)')
  })

  for (const topology of TOPOLOGIES) {
    for (const versionProfile of PROFILES) {
      describe(`${topology} ${versionProfile}`, () => {
        const cluster = useCluster({topology, versionProfile, auth: true, ...(topology === 'sharded' ? {shards: 2, mongos: 1} : {})})

        it('runs every helper with no error and no warning', async () => {
          assert.ok(existsSync(MONGOSH), 'mongosh is missing: run `npm ci --prefix test/conformance --no-audit --no-fund`')
          const shard = cluster.sim.info.processes.filter((p) => p.setName === 'shard01')
          const run = await mongosh(cluster.uri, {
            CONFORMANCE_TOPOLOGY: topology,
            CONFORMANCE_URI: cluster.uri,
            CONFORMANCE_AUTH: '1',
            CONFORMANCE_SHARD_URI: topology === 'sharded' ? shardUri(cluster.uri, shard.map((p) => p.host), 'shard01') : '',
          })
          const shown = `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`
          assert.equal(run.code, 0, shown)
          assert.equal(run.stderr, '', shown)
          assert.match(run.stdout, /## conformance checks done/, shown)
          assert.doesNotMatch(run.stdout, TROUBLE, shown)
          // numbers come back with the type they were stored with
          assert.match(run.stdout, /i: 'int',\s+l: 'long',\s+d: 'double',\s+m: 'decimal'/, shown)
          assert.match(run.stdout, /l: Long\('6'\)/, shown)
          assert.match(run.stdout, /## auth SCRAM-SHA-1\n\[\s*\{\s*user: 'pooltool'/, shown)
          assert.match(run.stdout, /## auth SCRAM-SHA-256\n\[\s*\{\s*user: 'pooltool'/, shown)
          if (topology === 'sharded') {
            assert.match(run.stdout, /'Currently running': 'no'/, shown)
            // a router's serverStatus has no lock sections (mongod's only)
            assert.match(run.stdout, /process: 'mongos'/, shown)
            assert.doesNotMatch(run.stdout, /'globalLock'|'locks'/, shown)
            // $shardedDataDistribution exists from 6.0.3; sh.status() shows undefined where it fails
            if (versionProfile !== '4.4') assert.match(run.stdout, /ns: 'conformance\.s',\s+shards: \[\s+\{\s+shardName: 'shard0\d',\s+numOrphanedDocs: 0,\s+numOwnedDocuments: 3,/, shown)
          }
          if (topology !== 'standalone') assert.match(run.stdout, /configured oplog size\n'\d+ MB'/, shown)
        })
      })
    }
  }
})
