/**
 * `bench --workload-file` on the embedded cluster: the file's operations run with their own
 * latency, a user's namespace is only read, and a file that would write to it is refused before
 * bench writes anything at all. The runs are in this process (test/helpers/in-process.ts, the path
 * bin/run.js takes): what they check is the load and the data, not the process, and a process start
 * per case cost ~1 CPU-s.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from 'mongodb'

import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-wf-cli-'))
const ORDERS = Array.from({length: 20}, (_, i) => ({_id: i, status: i % 2 === 0 ? 'open' : 'closed', total: i * 10}))

describe('bench --workload-file', {timeout: 90_000}, () => {
  const cluster = useCluster({})
  let client: MongoClient
  before(async () => {
    client = new MongoClient(cluster.uri)
    await client.db('shop').collection('orders').insertMany(ORDERS)
  })
  after(async () => {
    await client?.close()
  })
  const userOrders = () => client.db('shop').collection('orders').find({}).sort({_id: 1}).toArray()
  const databases = async () => (await client.db('admin').admin().listDatabases()).databases.map((d) => d.name)

  it("runs the file's operations, keeps latency per name, and only reads the user's namespace", async () => {
    const file = path.join(dir, 'shop.yaml')
    writeFileSync(
      file,
      [
        'operations:',
        '  - name: lookup',
        '    weight: 4',
        '    find: {filter: {_id: "{{seededId}}"}}',
        '  - name: openOrders',
        '    weight: 2',
        '    namespace: read',
        '    aggregate: {pipeline: [{$match: {status: "{{choice open closed}}"}}, {$limit: 5}]}',
        '  - name: addEvent',
        '    insert: {document: {kind: "event", n: "{{int 1 9}}", at: "{{now}}"}}',
        '  - name: bump',
        '    update: {filter: {_id: "{{seededId}}"}, update: {$inc: {n: 1}}}',
        '  - name: alive',
        '    command: {ping: 1}',
      ].join('\n'),
    )
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload-file', file, '--read-namespace', 'shop.orders', '--key-dist', 'zipfian',
      // A count: the seeded draws then name every operation, however slowly a loaded machine runs.
      '--seed-docs', '50', '--concurrency', '4', '--ops', '200', '--json'])
    const result = parseJson(run)
    assert.equal(run.code, 0, run.stderr)
    assert.equal(result.config.workload, 'file')
    assert.deepEqual(result.config.workloadFile.operations.map((o: any) => [o.name, o.kind, o.namespace]), [
      ['lookup', 'find', 'own'], ['openOrders', 'aggregate', 'read'], ['addEvent', 'insert', 'own'], ['bump', 'update', 'own'], ['alive', 'command', 'own'],
    ])
    assert.equal(result.config.workloadFile.readNamespace, 'shop.orders')
    const [r] = result.runs
    assert.equal(r.errors, 0, JSON.stringify(r.errorsByClass))
    assert.deepEqual(Object.keys(r.latencyByOpUs).sort(), ['addEvent', 'alive', 'bump', 'lookup', 'openOrders'])
    assert.equal(Object.values(r.latencyByOpUs).reduce((sum: number, l: any) => sum + l.count, 0), r.ops)
    assert.deepEqual(await userOrders(), ORDERS, "the user's namespace is as it was")
    assert.equal(result.cleanedUp, true)
  })

  it('with --workers 2: each worker loads the file; the operations and their latency add up over both', async () => {
    const file = path.join(dir, 'workers.yaml')
    writeFileSync(file, ['operations:', '  - name: lookup', '    weight: 3', '    find: {filter: {_id: "{{seededId}}"}}', '  - name: openOrders', '    namespace: read', '    find: {filter: {status: open}}'].join('\n'))
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload-file', file, '--read-namespace', 'shop.orders', '--workers', '2',
      '--seed-docs', '50', '--concurrency', '4', '--ops', '200', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.equal(r.errors, 0, JSON.stringify(r.errorsByClass))
    assert.equal(r.ops, 200)
    assert.equal(r.workers.count, 2)
    assert.equal(r.workers.perWorker.reduce((sum: number, w: {ops: number}) => sum + w.ops, 0), 200)
    assert.deepEqual(Object.keys(r.latencyByOpUs).sort(), ['lookup', 'openOrders'])
    assert.equal(Object.values(r.latencyByOpUs).reduce((sum: number, l: any) => sum + l.count, 0), r.ops, 'per-operation histograms merged over the workers')
    assert.deepEqual(await userOrders(), ORDERS, "the user's namespace is as it was")
  })

  it('a file that writes to the read namespace is refused before bench writes anything', async () => {
    const file = path.join(dir, 'harm.json')
    writeFileSync(file, JSON.stringify({operations: [{name: 'lookup', find: {}}, {name: 'wipe', namespace: 'read', update: {filter: {}, update: {$set: {total: 0}}, multi: true}}]}))
    const before = await databases()
    const run = await runInProcess(['bench', '--uri', cluster.uri, '--workload-file', file, '--read-namespace', 'shop.orders', '--db', 'pooltool_wf_refused'])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /operation 'wipe' field namespace: update writes, and writes go only to pooltool's own collection, never to shop\.orders/)
    assert.deepEqual(await userOrders(), ORDERS)
    assert.deepEqual(await databases(), before, 'no database created, not even pooltool\'s own')
  })
})
