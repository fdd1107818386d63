/**
 * `pooltool locks watch` on the embedded 4.4 cluster (config.locks through the router): it
 * covers the whole --duration, prints events in time order, and takes hold times from the
 * lock documents — a DDL that takes and frees its locks between two polls is a bound
 * labelled as such, never a hold figure equal to the poll interval.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {MongoClient} from 'mongodb'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, serverFigureGrew} from '../helpers/faults.js'
import {waitForState} from '../helpers/sim.js'

/** finds served by the router: each locks watch poll runs four. */
const finds = (status: any): number => Number(status.opcounters?.query ?? 0)

describe('locks watch: duration, order and hold times', {timeout: 90_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, mongos: 1})
  let client: MongoClient
  let router: MongoClient
  before(() => {
    client = new MongoClient(cluster.uri, {serverSelectionTimeoutMS: 5000})
    router = observer(cluster.uri)
  })
  after(async () => {
    await client?.close()
    await router?.close()
  })

  it('runs the whole --duration: the last poll is at the deadline', async () => {
    const run = await runCli(['locks', 'watch', '--json', '--uri', cluster.uri, '--duration', '2s', '--interval', '500ms'], {timeoutMs: 30_000})
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.ok(result.durationMS >= 2000, `covered ${result.durationMS} ms of 2000`)
    assert.equal(result.interrupted, false)
  })

  it('DDL taken and freed between polls: bounded and labelled, kept out of the hold percentiles; events in time order', async () => {
    let watchProcess: {kill(signal: NodeJS.Signals): boolean} | undefined
    const watch = runCli(['locks', 'watch', '--json', '--uri', cluster.uri, '--db', 'quick', '--interval', '1s'], {
      timeoutMs: 60_000,
      onSpawn: (child) => (watchProcess = child),
    })
    await waitForState('the watch has polled once', serverFigureGrew(router, finds, 4).server, (grew) => grew)
    // Each create and drop holds the database lock for a few ms: far less than the 1 s between polls.
    for (let i = 0; i < 4; i++) {
      await client.db('quick').createCollection(`c${i}`)
      await client.db('quick').collection(`c${i}`).drop()
    }
    await waitForState('the watch has polled since the DDL', serverFigureGrew(router, finds, 4).server, (grew) => grew)
    watchProcess!.kill('SIGINT')
    const run = await watch
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)

    const times = result.events.map((e: any) => Date.parse(e.at))
    assert.deepEqual(times, [...times].sort((a, b) => a - b), `events in time order: ${JSON.stringify(result.events.map((e: any) => [e.kind, e.name, e.at]))}`)
    const releases = result.events.filter((e: any) => e.kind === 'released')
    assert.ok(releases.length > 0, JSON.stringify(result.events))
    for (const e of releases) {
      assert.ok(e.holdBetweenPolls === true || typeof e.holdMinMS === 'number', `every hold is a range or a labelled bound: ${JSON.stringify(e)}`)
    }
    const db = result.locks.find((l: any) => l.name === 'quick')
    assert.ok(db, JSON.stringify(result.locks))
    assert.ok(db.betweenPolls.count >= 1, `holds between polls are counted apart: ${JSON.stringify(db)}`)
    assert.equal(db.holdMS.count + db.betweenPolls.count, db.released + db.overtaken, `each release has one hold, in one of the two: ${JSON.stringify(db)}`)
    assert.ok(result.notes.some((n: string) => /holds taken and freed between two polls are only bounded by that gap/.test(n)), JSON.stringify(result.notes))
  })

  it('locks list: a released lock says when it was last taken, never "0ms ago"', async () => {
    await client.db('released').createCollection('c')
    const json = parseJson(await runCli(['locks', 'list', '--json', '--uri', cluster.uri, '--db', 'released']))
    const db = json.locks.find((l: any) => l.name === 'released')
    assert.ok(db, JSON.stringify(json.locks))
    assert.equal(db.state, 'unlocked')
    assert.equal(db.whenMeans, 'last-taken')
    assert.equal(db.heldMS, null)
    assert.equal(typeof db.sinceAgeMS, 'number')
    assert.ok(Date.parse(db.since) <= Date.parse(json.now), 'since is the last grab, on the server clock')
    const text = await runCli(['locks', 'list', '--uri', cluster.uri, '--db', 'released'])
    assert.equal(text.code, 0, text.stderr)
    const row = text.stdout.split('\n').find((line) => line.includes('│ released '))
    assert.ok(row, text.stdout)
    assert.match(row!, /│ last taken [^│]* ago/)
  })
})
