/**
 * Big results through a pipe: a sharded cluster (4.4 shapes) with 10,000 lock documents. The
 * --json of `locks list` is megabytes and oclif prints it after the command's finally(); the
 * snapshot document on stdout is as big. Both must arrive whole, however fast the reader reads:
 * pooltool's exit watchdog used to cut them at 64–220 KB. Those runs are real processes; the filtered
 * list, which checks what is listed rather than the pipe, runs in this process (test/helpers/in-process.ts).
 */
import assert from 'node:assert/strict'
import {before, describe, it} from 'node:test'

import {ObjectId} from 'bson'
import {MongoClient} from 'mongodb'

import {parseJson, runCli, runCliClosingStdoutAfter} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const LOCKS = 10_000

describe('big results arrive whole through a pipe', {timeout: 120_000}, () => {
  // One process per role: the lock documents live on the config server, and what is big is their number, not the
  // hosts (each further host only adds its own reads to the snapshot and to every start).
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', mongos: 1, shards: 1, shardMembers: 1, configMembers: 1})

  before(async () => {
    const configServer = cluster.sim.info.processes.find((p) => p.role === 'config')!
    const client = new MongoClient(`mongodb://${configServer.host}/?directConnection=true`)
    try {
      const when = new Date()
      await client.db('config').collection('locks').insertMany(
        Array.from({length: LOCKS}, (_, i) => ({_id: `big${i % 50}.coll${i}`, state: 0, ts: new ObjectId(), who: `10.0.0.1:27018:1700000000:42:conn${i}`, process: '10.0.0.1:27018:1700000000:42', when, why: 'dropCollection'})) as never[],
      )
    } finally {
      await client.close()
    }
  })

  it('locks list --json: every lock, parseable', async () => {
    const run = await runInProcess(['locks', 'list', '--uri', cluster.uri, '--json', '--db', 'big7'])
    assert.equal(parseJson(run).locks.length, LOCKS / 50, 'the filtered list')
    const all = await runCli(['locks', 'list', '--uri', cluster.uri, '--json'])
    assert.ok(all.stdout.length > 1_000_000, `megabytes of JSON (${all.stdout.length} bytes)`)
    const names = new Set(parseJson(all).locks.map((lock: {name: string}) => lock.name))
    for (let i = 0; i < LOCKS; i++) assert.ok(names.has(`big${i % 50}.coll${i}`), `big${i % 50}.coll${i} listed`)
  })

  it('locks list --json into a pipe closed after 1000 bytes: exit 141, not 0 (the document is printed after the command ended)', async () => {
    // As `| head -c 1000`: the reader goes away while the megabytes of JSON are still coming.
    const {code, read, stderr} = await runCliClosingStdoutAfter(['locks', 'list', '--uri', cluster.uri, '--json'], 1000)
    assert.ok(read >= 1000, `read ${read} bytes`)
    assert.equal(code, 141, stderr)
    assert.doesNotMatch(stderr, /EPIPE|Error/)
  })

  it('snapshot to stdout: the whole document', async () => {
    const run = await runCli(['snapshot', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    const document = JSON.parse(run.stdout) as object
    assert.ok(JSON.stringify(document).includes(`big49.coll${LOCKS - 1}`), 'the last lock document is in it')
  })
})
