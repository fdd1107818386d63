/**
 * Terminal escape injection, through the built CLI against an embedded 4.4 sharded
 * cluster. Any application sets its own appName, and anyone who can write config.locks sets a
 * lock's _id, who, why and process: a client connected with an appName full of escape codes
 * (retitle the terminal, move up a line, erase it), and a lock and lockping written with the same
 * payload, must reach `conns list | watch` and `locks list | pings | watch` visibly escaped
 * (`\x1b]0;pwned`), with no raw ESC or BEL on stdout or stderr.
 *
 * The locks watches run as real processes: they are stopped by a signal once a line has been printed.
 * conns list, conns watch --count, locks list and locks pings go through the in-process runner
 * (test/helpers/in-process.ts), the path bin/run.js takes (the secret guard, oclif, the command's own
 * writes to stdout and stderr), without a process start (about 1 CPU-s each).
 */
import assert from 'node:assert/strict'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'
import {MongoClient, ObjectId} from 'mongodb'

import {assertNothingInjected, browserMissing, launchBrowser, openReportPage} from '../helpers/browser.js'
import {type CliRun, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {CliOutput} from '../helpers/output.js'
import {useCluster} from '../helpers/cluster.js'

const PAYLOAD = '\u001B]0;pwned\u0007\u001B[1A\u001B[2K'
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[1A\\x1b[2K'
const APP = `app${PAYLOAD}`
const LOCK = `orders${PAYLOAD}`
/** A process id of the 4.4 shape (host:port:epoch:random), its host poisoned; the lockping's _id too. */
const PROCESS = `evil${PAYLOAD}:27018:1604300000:42`
/** Anything a terminal acts on: C0 but the newline, DEL, C1. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/

function assertClean(name: string, run: CliRun): void {
  for (const [stream, text] of [['stdout', run.stdout], ['stderr', run.stderr]] as const) {
    const found = RAW_CONTROL.exec(text)
    assert.equal(found, null, `${name}: a raw control character (U+${found?.[0].codePointAt(0)!.toString(16).padStart(4, '0')}) on ${stream}: ${JSON.stringify(text)}`)
  }
}

/** Markup a lock's writer could put in its _id and why, for the HTML report. */
const MARKUP_LOCK = 'orders.<img src=x onerror=alert(1)>'
const MARKUP_WHY = '</script><script>alert(2)</script>'

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('hostile strings from clients and config.locks are shown escaped', {timeout: 180_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', mongos: 1, shards: 1, shardMembers: 1, configMembers: 1})
  let app: MongoClient
  let admin: MongoClient

  before(async () => {
    // The appName travels in the handshake's client metadata, as the server shows it in $currentOp.
    app = new MongoClient(cluster.uri, {appName: APP, minPoolSize: 1})
    await app.db('admin').command({ping: 1})
    admin = new MongoClient(cluster.uri)
    // Through the router, as any user with write access to the config database could.
    await admin.db('config').collection('lockpings').insertOne({_id: PROCESS as never, ping: new Date()})
    await admin.db('config').collection('locks').insertOne({
      _id: LOCK as never, state: 2, process: PROCESS, ts: new ObjectId(), when: new Date(), who: `${PROCESS}:conn${PAYLOAD}`, why: `why${PAYLOAD}`,
    })
  })

  after(async () => {
    await app?.close()
    await admin?.close()
  })

  it('the handshake keeps the appName (the JSON has it, control characters escaped by JSON)', async () => {
    const run = await runInProcess(['conns', 'list', '--uri', cluster.uri, '--json'])
    assert.equal(run.code, 0, run.stderr)
    assertClean('conns list --json', run)
    const holders = JSON.parse(run.stdout).hosts.flatMap((h: {holders?: Array<{appName: string}>}) => h.holders ?? [])
    assert.ok(holders.some((h: {appName: string}) => h.appName === APP), JSON.stringify(holders))
  })

  it('conns list', async () => {
    const run = await runInProcess(['conns', 'list', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    assertClean('conns list', run)
    assert.ok(run.stdout.includes(`app${SHOWN}@127.0.0.1`), run.stdout)
  })

  it('conns watch, plain, two rounds and the summary', async () => {
    const run = await runInProcess(['conns', 'watch', '--uri', cluster.uri, '--count', '2', '--interval', '200ms'])
    assert.equal(run.code, 0, run.stderr)
    assertClean('conns watch', run)
    assert.match(run.stdout, new RegExp(` #2 .*holders=[^ ]*${escaped(`app${SHOWN}@127.0.0.1`)}`), 'a round line names the holder')
    assert.ok(run.stdout.includes(`app${SHOWN}@127.0.0.1 (nodejs)`), `the summary names it: ${run.stdout}`)
  })

  it('locks list and locks pings', async () => {
    const list = await runInProcess(['locks', 'list', '--uri', cluster.uri, '--all'])
    assert.equal(list.code, 0, list.stderr)
    assertClean('locks list', list)
    const row = list.stdout.split('\n').find((line) => line.startsWith(`│ orders${SHOWN}`))
    assert.ok(row, list.stdout)
    for (const field of [`evil${SHOWN}`, `why${SHOWN}`]) assert.ok(row!.includes(field), `${field} in ${row}`)
    // who is cut to its column's 40 characters: its escaped start is there.
    assert.ok(row!.includes(`evil\\x1b]0;pwned`), row)

    const pings = await runInProcess(['locks', 'pings', '--uri', cluster.uri, '--all'])
    assert.equal(pings.code, 0, pings.stderr)
    assertClean('locks pings', pings)
    const ping = pings.stdout.split('\n').find((line) => line.startsWith(`│ evil${SHOWN}:27018:1604300000:42`))
    assert.ok(ping, pings.stdout)
    assert.ok(ping!.includes(`orders${SHOWN}`), `the lock it holds: ${ping}`)
  })

  it('locks watch, plain: held at the start, released, and the summary', async () => {
    const out = new CliOutput()
    const run = runCli(['locks', 'watch', '--uri', cluster.uri, '--interval', '200ms'], {timeoutMs: 90_000, onSpawn: out.attach})
    await out.until(new RegExp(`held {6}${escaped(`orders${SHOWN}`)} by ${escaped(`evil${SHOWN}`)}.*; ${escaped(`why${SHOWN}`)}\\)`))
    // Freed on the server: the next poll prints the release, with the lock's name escaped again.
    await admin.db('config').collection('locks').updateOne({_id: LOCK as never}, {$set: {state: 0}})
    await out.until(new RegExp(`released {2}${escaped(`orders${SHOWN}`)} by ${escaped(`evil${SHOWN}`)}`))
    out.signal('SIGINT')
    const done = await run
    assert.equal(done.code, 0, done.stderr)
    assertClean('locks watch', done)
    assert.match(done.stdout, new RegExp(`^│ ${escaped(`orders${SHOWN}`)} +│`, 'm'), `the summary's hold table: ${done.stdout}`)
  })

  it('locks watch --html: a lock whose _id and why are markup is shown as text in the browser, never run', {skip: browserMissing()}, async () => {
    await admin.db('config').collection('locks').insertOne({
      _id: MARKUP_LOCK as never, state: 2, process: 'ConfigServer', ts: new ObjectId(), when: new Date(), who: `ConfigServer:conn1${MARKUP_WHY}`, why: MARKUP_WHY,
    })
    const html = path.join(mkdtempSync(path.join(tmpdir(), 'pooltool-hostile-')), 'locks.html')
    const out = new CliOutput()
    const run = runCli(['locks', 'watch', '--uri', cluster.uri, '--interval', '200ms', '--html', html], {timeoutMs: 90_000, onSpawn: out.attach})
    await out.until(/held {6}orders\.<img src=x onerror=alert\(1\)>/)
    // Freed, so the page has a whole hold (a bar with its holder in the title) as well as the lane.
    await admin.db('config').collection('locks').updateOne({_id: MARKUP_LOCK as never}, {$set: {state: 0}})
    await out.until(/released {2}orders\.<img/)
    out.signal('SIGINT')
    const done = await run
    assert.equal(done.code, 0, done.stderr)
    const browser = await launchBrowser()
    try {
      assertNothingInjected(await openReportPage(browser, html), {title: `pooltool locks watch · ${cluster.uri}`, texts: [MARKUP_LOCK], charts: ['timeline']})
    } finally {
      await browser.close()
    }
  })
})
