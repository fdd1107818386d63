import {Flags} from '@oclif/core'

import {BaseCommand} from '../src/cli/base-command.js'
import {durationFlag} from '../src/cli/flags.js'
import {usageError} from '../src/errors.js'
import {parseFaultSpec} from '../src/parse/fault-spec.js'
import {parseMemberOptions} from '../src/parse/member-options.js'
import {ndjsonFaultFired, ndjsonScenarioFired, ndjsonStarted, renderFaultFired, renderReplayStarted, renderScenarioFired, renderSimStarted, type SimStartedResult, toReplayStartedResult, toSimStartedResult} from '../src/reporters/sim.js'
import {runReplayUntilStopped} from '../src/replay/run.js'
import {runSimUntilStopped} from '../src/run-sim.js'
import {DEFAULT_SIM_OPTIONS, SIM_TOPOLOGIES, SIM_VERSION_PROFILES, type SimTopology, type SimVersionProfile} from '../src/sim/index.js'

/** What shapes a simulated cluster: none of it applies to a replay, which serves what was captured. */
const SHAPE_FLAGS = [
  'topology', 'version-profile', 'auth', 'port', 'members', 'member-options', 'mongos', 'shards', 'shard-members', 'config-members', 'latency', 'setup-cost', 'max-connections',
  'scram-iterations', 'scram-sha256-iterations', 'time-scale', 'scenario', 'fault', 'ndjson',
] as const

export default class Sim extends BaseCommand<typeof Sim> {
  protected override get stopWording(): string {
    return process.argv.includes('--replay') || process.argv.some((a) => a.startsWith('--replay=')) ? 'stopping the replay' : 'stopping the embedded cluster'
  }

  static override summary = 'Start the embedded simulated MongoDB cluster on loopback and print its URI.'

  static override description =
    'A wire-protocol server that behaves like the parts of mongod/mongos pooltool observes (connections, SCRAM, ' +
    'serverStatus, $currentOp, distributed locks). Every other command starts one by itself when no URI is given; ' +
    'run it here to point other tools at it, or to inject faults. Runs until Ctrl-C (or --duration).\n\n' +
    'Each --scenario and each scheduled --fault prints one line on stderr when it fires (scenarios fire at start: what ' +
    'they left behind and where); --ndjson streams the started document, then one {"type":"scenario", …} line per ' +
    'scenario and one {"type":"fault", …} line per fired fault on stdout (--json prints only the started document). If the cluster\'s ' +
    'process dies, sim exits with one line: 9 when it was killed from outside (kill -9, the OOM killer), 1 when it failed on its own.\n\n' +
    '--replay FILE serves a file written by `pooltool snapshot` instead: one loopback listener per captured host, every ' +
    'command answered with the captured document (or the captured error), host names rewritten to the listeners, clocks ' +
    'frozen at capture (every served time is the capture\'s plus the time since the replay began: ages and verdicts stay as captured). Read only and without authentication; the printed URI keeps the captured options (directConnection, replicaSet).'

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --auth --json',
    '<%= config.bin %> <%= command.id %> --topology replset --latency 2ms',
    '<%= config.bin %> <%= command.id %> --topology replset --members 4 --member-options hidden@3,arbiter@4',
    '<%= config.bin %> <%= command.id %> --topology sharded --mongos 2 --shards 2 --version-profile 4.4 --time-scale 0.01',
    '<%= config.bin %> <%= command.id %> --fault stall:1s@5s --fault drop-connections@20s',
    '<%= config.bin %> <%= command.id %> --ndjson --fault restart:2s@30s | jq -c \'select(.type=="fault")\'',
    '<%= config.bin %> <%= command.id %> --topology replset --fault lock-hold:app.orders:W:5s@10s   # app.orders is locked exclusively from 10 s to 15 s',
    '<%= config.bin %> <%= command.id %> --replay snapshot.json   # then: <%= config.bin %> conns list --uri <printed uri>',
  ]

  static override flags = {
    topology: Flags.string({options: [...SIM_TOPOLOGIES], default: DEFAULT_SIM_OPTIONS.topology, summary: 'Shape of the cluster.'}),
    'version-profile': Flags.string({options: [...SIM_VERSION_PROFILES], default: DEFAULT_SIM_OPTIONS.versionProfile, summary: 'Server release to behave like (wire version, serverStatus fields, lock model).'}),
    auth: Flags.boolean({default: false, summary: 'Require SCRAM; the printed URI carries a root user with SCRAM-SHA-1 and SCRAM-SHA-256 credentials.'}),
    port: Flags.integer({default: DEFAULT_SIM_OPTIONS.basePort, min: 0, max: 65535, summary: 'First port to listen on; 0 picks free ports.'}),
    members: Flags.integer({default: DEFAULT_SIM_OPTIONS.members, min: 1, max: 7, summary: 'Replica-set members (replset topology).'}),
    'member-options': Flags.string({
      summary: 'Replica-set member settings OPTION@MEMBER[,…] (MEMBER from 1): hidden, arbiter, priority=N; e.g. hidden@2,arbiter@3.',
      helpValue: '<options>',
    }),
    mongos: Flags.integer({default: DEFAULT_SIM_OPTIONS.mongos, min: 1, max: 8, summary: 'Routers (sharded topology).'}),
    shards: Flags.integer({default: DEFAULT_SIM_OPTIONS.shards, min: 1, max: 128, summary: 'Shards (sharded topology).'}),
    'shard-members': Flags.integer({default: DEFAULT_SIM_OPTIONS.shardMembers, min: 1, max: 7, summary: 'Members of each shard\'s replica set (sharded topology).'}),
    'config-members': Flags.integer({default: DEFAULT_SIM_OPTIONS.configMembers, min: 1, max: 7, summary: 'Members of the config server replica set (sharded topology).'}),
    latency: durationFlag({default: DEFAULT_SIM_OPTIONS.latencyMs, summary: 'Service time added to every operation, e.g. 2ms.'}),
    'setup-cost': durationFlag({default: DEFAULT_SIM_OPTIONS.setupCostMs, summary: 'Time added to every new connection before its first reply, e.g. 20ms.'}),
    'max-connections': Flags.integer({default: DEFAULT_SIM_OPTIONS.maxIncomingConnections, min: 1, summary: 'net.maxIncomingConnections per process.'}),
    'scram-iterations': Flags.integer({default: DEFAULT_SIM_OPTIONS.scramIterationCount, min: 5000, summary: 'scramIterationCount (SCRAM-SHA-1) for the users created at start.'}),
    'scram-sha256-iterations': Flags.integer({default: DEFAULT_SIM_OPTIONS.scramSHA256IterationCount, min: 5000, summary: 'scramSHA256IterationCount for the users created at start.'}),
    'time-scale': Flags.string({default: String(DEFAULT_SIM_OPTIONS.timeScale), summary: 'Multiply internal intervals (lock ping 30 s, expiry 15 min): 0.01 makes the expiry 9 s.'}),
    scenario: Flags.string({multiple: true, default: [], summary: 'Canned situation: dead-lock-holder (sharded), upgraded-from-3.4 (sharded, 4.4: the 3.4 balancer lock).'}),
    fault: Flags.string({multiple: true, default: [], summary: 'Scheduled fault KIND[:VALUE]@AT, e.g. stall:1s@5s, drop-connections@10s, restart:2s@30s, lock-hold:app.orders:W:5s@10s (an index build holds app.orders\' collection lock, W exclusive or R shared, for 5 s: operations on it wait).'}),
    duration: durationFlag({summary: 'Stop by itself after this long, e.g. 60s, 10m (default: run until Ctrl-C).'}),
    replay: Flags.string({
      summary: 'Serve a snapshot file (from `pooltool snapshot`) instead of simulating a cluster.',
      helpValue: '<file>',
      exclusive: [...SHAPE_FLAGS],
    }),
    // A test option (hidden from help and the README): the replayed clocks as they will be this much later.
    'replay-clock-offset': durationFlag({hidden: true, summary: 'Test option: move the replayed clocks on by this much at start, e.g. 5m.'}),
    ndjson: Flags.boolean({default: false, exclusive: ['json'], summary: 'Stream JSON lines: the started document (type "started"), then one line per scenario (type "scenario") and per fired fault (type "fault").', helpGroup: 'OUTPUT'}),
  }

  async run(): Promise<void> {
    const {flags} = this
    if (flags.replay !== undefined) return this.replay(flags.replay)
    const timeScale = Number(flags['time-scale'])
    if (!(timeScale > 0 && timeScale <= 1000)) {
      throw usageError(`--time-scale '${flags['time-scale']}' is not a number above 0`, 'e.g. --time-scale 0.01 makes the 15 min lock expiry 9 s')
    }
    const options = {
      topology: flags.topology as SimTopology,
      versionProfile: flags['version-profile'] as SimVersionProfile,
      auth: flags.auth,
      basePort: flags.port,
      members: flags.members,
      memberOptions: flags['member-options'] === undefined ? [] : parseMemberOptions(flags['member-options']),
      mongos: flags.mongos,
      shards: flags.shards,
      shardMembers: flags['shard-members'],
      configMembers: flags['config-members'],
      latencyMs: flags.latency,
      setupCostMs: flags['setup-cost'],
      maxIncomingConnections: flags['max-connections'],
      scramIterationCount: flags['scram-iterations'],
      scramSHA256IterationCount: flags['scram-sha256-iterations'],
      timeScale,
      scenarios: flags.scenario,
      faultSchedule: flags.fault.map((spec) => parseFaultSpec(spec)),
    }
    const durationMs = flags.duration
    const mode = this.outputMode({ndjson: flags.ndjson})
    await runSimUntilStopped(options, {
      signal: this.interruptSignal,
      durationMs,
      // The URI is needed while the cluster runs, not when it stops, so the
      // result (SimStartedResult) is printed here rather than returned.
      onReady: (info) => {
        const started: SimStartedResult = toSimStartedResult(info)
        if (mode === 'ndjson') this.log(ndjsonStarted(started))
        else if (mode === 'json') this.logJson(started)
        else this.logText((layout) => renderSimStarted(started, layout))
      },
      // stderr in every mode (--json included: the started document cannot carry later events).
      onScenarioFired: (event) => {
        this.stderrText(renderScenarioFired(event))
        if (mode === 'ndjson') this.log(ndjsonScenarioFired(event))
      },
      onFaultFired: (event) => {
        this.stderrText(renderFaultFired(event))
        if (mode === 'ndjson') this.log(ndjsonFaultFired(event))
      },
    })
    // Ctrl-C is how an open-ended sim ends (exit 0); cutting a --duration short is an interruption, as in conns watch.
    if (this.interruptSignal.aborted && durationMs !== undefined) process.exitCode = this.interruptedExitCode
  }

  private async replay(file: string): Promise<void> {
    const durationMs = this.flags.duration
    await runReplayUntilStopped(file, {
      signal: this.interruptSignal,
      durationMs,
      clockOffsetMS: this.flags['replay-clock-offset'],
      onReady: (info) => {
        const started = toReplayStartedResult(info)
        if (this.jsonEnabled()) this.logJson(started)
        else this.logText((layout) => renderReplayStarted(started, layout))
      },
    })
    if (this.interruptSignal.aborted && durationMs !== undefined) process.exitCode = this.interruptedExitCode
  }
}
