/**
 * Fault matrix, `pooltool bench` columns (closed loop and open loop), on one standalone
 * with auth. Each fault is injected once the measured run has done some finds (the
 * server's query counter is the trigger; --warmup is 0, so they are measured). Every
 * run ends on its own (bounded --duration, --timeout-ms) with its report, and its
 * counts add up: errors = the sum of errorsByClass, and in open loop every scheduled
 * operation is completed, failed or missed (scheduled = ops + errors + missed).
 * bench uses its default --db throughout (it refuses a --db it did not mark).
 *
 * One run spawns the real process (closed loop, dropped sockets: the exit-0 path every case takes); the
 * others run in this process (test/helpers/in-process.ts, the path bin/run.js takes), so this process runs
 * their load: what the matrix asserts is that the counts add up, not how many there were, so in closed loop the
 * server answers in CLOSED_LOOP_LATENCY_MS and the open loop asks 200/s (see below).
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import type {MongoClient} from 'mongodb'

import {type SimCluster, type SimFault} from '../../src/sim/index.js'
import {parseJson, type CliRun} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, runWithFault, serverFigureGrew, sum, withUser} from '../helpers/faults.js'

const LOOPS = {
  'closed loop': ['--concurrency', '4'],
  'open loop': ['--rate', '200', '--concurrency', '8'],
} as const

/**
 * Per operation on the server during a closed-loop case: a closed loop asks again as soon as it is answered, so
 * against a server answering at once its 4 workers ran ~4,000 finds in 1.5 s (measured at load 4: 1.15 CPU-s in this
 * process for the run, and the cluster's work for each find besides); at 5 ms a run does at most 1,200, and the same
 * faults meet it. Not for the open loop, whose rate sets its pace: the latency also delays each of the ~25 commands
 * bench sends one after another to set up and end a run (10 ms cost each case 0.3 s of wall).
 */
const CLOSED_LOOP_LATENCY_MS = 5
type Loop = keyof typeof LOOPS

const finds = (status: any): number => Number(status.opcounters?.query ?? 0)
/**
 * Finds served before the fault: enough that the run measured some (a closed-loop worker asks again only once
 * answered, so most were answered), few enough that a loaded machine reaches them well inside the 1.5 s run
 * (with 100, a run at load 19 served 65 finds in all and ended before its fault). The namespace's marker reads
 * are finds too: a handful.
 */
const FINDS_BEFORE_FAULT = 25

interface BenchRun {
  ops: number
  errors: number
  errorsByClass: Record<string, number>
  scheduled: number | null
  missed: number
}

/** The one run of the result, its counts checked. */
function honestRun(run: CliRun, loop: Loop): BenchRun {
  const result = parseJson(run)
  assert.equal(result.runs.length, 1, run.stderr)
  const r = result.runs[0] as BenchRun
  assert.equal(r.errors, sum(r.errorsByClass), `errors = the sum of errorsByClass: ${JSON.stringify(r.errorsByClass)}`)
  if (loop === 'open loop') {
    assert.equal(typeof r.scheduled, 'number', 'open loop reports scheduled')
    assert.equal(r.scheduled, r.ops + r.errors + r.missed, `every scheduled operation accounted for: ${JSON.stringify({scheduled: r.scheduled, ops: r.ops, errors: r.errors, missed: r.missed})}`)
  }
  assert.ok(r.ops > 0, 'operations before the fault were measured')
  return r
}

describe('fault matrix: bench', {timeout: 150_000}, () => {
  const cluster = useCluster({auth: true})
  let admin: MongoClient
  const args = (loop: Loop, uri: string) => ['bench', '--warmup', '0s', '--uri', uri, '--workload', 'find', '--seed-docs', '50', '--duration', '1500ms', '--timeout-ms', '800', ...LOOPS[loop], '--json']
  /** For a fault the test itself must cause (a dropped user): the test watches the query counter. */
  const measuring = () => serverFigureGrew(admin, finds, FINDS_BEFORE_FAULT)
  /** For a cluster fault: the cluster fires it once the measured run has done some finds, however loaded the machine. */
  const measured = () => ({armed: {host: cluster.sim.info.processes[0]!.host, opcounter: 'query' as const, grows: FINDS_BEFORE_FAULT}})

  /** The server's pace for `loop`'s case (see CLOSED_LOOP_LATENCY_MS); each case sets it first. */
  const paceFor = (loop: Loop) => cluster.sim.control({kind: 'latency', ms: loop === 'closed loop' ? CLOSED_LOOP_LATENCY_MS : 0})

  before(() => {
    admin = observer(cluster.uri)
  })
  after(async () => {
    await admin?.close()
  })

  const ridden: Array<[string, SimFault | ((sim: SimCluster) => Promise<void>)]> = [
    ['dropped sockets', {kind: 'drop-connections'}],
    ['stall shorter than --timeout-ms', {kind: 'stall', ms: 500}],
    ['restart', {kind: 'restart', downMS: 300}],
    [
      'connection limit',
      async (s) => {
        // The pool's connections are dropped and only 2 may come back: the workers share them.
        await s.control({kind: 'max-connections', max: 2})
        await s.control({kind: 'drop-connections'})
      },
    ],
  ]
  for (const loop of Object.keys(LOOPS) as Loop[]) {
    for (const [name, fault] of ridden) {
      it(`${loop}, ${name}: ends at --duration with honest counts, exit 0`, async () => {
        // Every case exits 0: the first spawns the real process, the others run in this process (the path bin/run.js takes).
        const inProcess = !(loop === 'closed loop' && name === 'dropped sockets')
        await paceFor(loop)
        const {run} =
          typeof fault === 'function'
            ? await runWithFault(cluster.sim, args(loop, cluster.uri), measuring(), () => fault(cluster.sim), {inProcess})
            : await runWithFault(cluster.sim, args(loop, cluster.uri), measured(), fault, {inProcess})
        if (name === 'connection limit') await cluster.sim.control({kind: 'max-connections', max: 65_536})
        assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
        honestRun(run, loop)
      })
    }
  }

  for (const loop of Object.keys(LOOPS) as Loop[]) {
    it(`${loop}, user dropped: operations fail as unauthorized and are counted; the run ends with its report`, async () => {
      const user = `bench-${loop.split(' ')[0]}`
      await paceFor(loop)
      await admin.db('admin').command({createUser: user, pwd: `${user}-pw`, roles: [{role: 'readWrite', db: 'pooltool_bench'}]})
      const {run} = await runWithFault(cluster.sim, args(loop, withUser(cluster.uri, user, `${user}-pw`)), measuring(), async () => {
        await admin.db('admin').command({dropUser: user})
      }, {inProcess: true})
      assert.equal(run.code, USER_DROPPED_EXIT, `${run.stdout}\n${run.stderr}`)
      const r = honestRun(run, loop)
      assert.ok(r.errors > 0, JSON.stringify(r.errorsByClass))
      assert.ok((r.errorsByClass.Unauthorized ?? 0) > 0, JSON.stringify(r.errorsByClass))
      assert.equal(run.stdout.includes(`${user}-pw`), false)
    })
  }

  // The host goes down for longer than what is left of the run (--duration 1.5 s plus --timeout-ms). The run waits for
  // it to read the servers at its end (the time these cases take); a recover makes sure it is up for the next case.
  for (const loop of Object.keys(LOOPS) as Loop[]) {
    it(`${loop}, host lost: operations fail and are counted; the run ends on its own with its report`, async () => {
      await paceFor(loop)
      const {run} = await runWithFault(cluster.sim, args(loop, cluster.uri), measured(), {kind: 'restart', downMS: 4000}, {inProcess: true})
      await cluster.sim.control({kind: 'recover'})
      assert.equal(run.code, HOST_LOST_EXIT, `${run.stdout}\n${run.stderr}`)
      const r = honestRun(run, loop)
      assert.ok(r.errors > 0, JSON.stringify(r.errorsByClass))
    })
  }
})

/** Exit codes of the two faults that stay to the end of a run (see the report's README notes). */
const USER_DROPPED_EXIT = 0
const HOST_LOST_EXIT = 0
