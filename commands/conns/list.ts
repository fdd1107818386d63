import {Flags} from '@oclif/core'

import {TargetCommand} from '../../src/cli/base-command.js'
import type {ConnsListResult} from '../../src/conns/types.js'
import {runConnsList} from '../../src/conns/watch.js'
import {CONNS_DEFAULTS} from '../../src/defaults.js'
import {renderList} from '../../src/reporters/conns.js'
import {SIM_TOPOLOGIES, type SimTopology} from '../../src/sim/types.js'

export default class ConnsList extends TargetCommand<typeof ConnsList> {
  static override summary = 'One snapshot of server connection counts, mongos pools and who holds the connections, on every host.'

  static override description =
    'The same discovery and per-host figures as `conns watch`, polled once: serverStatus.connections with every ' +
    'field the server version has (absent ones stay absent), connPoolStats on mongos, and $currentOp with idle ' +
    'connections grouped by appName, client host and driver. Rates need two polls: use `conns watch` for them.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017',
    '<%= config.bin %> <%= command.id %> --json | jq \'.hosts[] | {host, current, holders}\'',
  ]

  static override flags = {
    holders: Flags.boolean({default: true, allowNo: true, summary: 'Read who holds the connections ($currentOp with idle connections); --no-holders skips it.'}),
    'sim-topology': Flags.string({options: [...SIM_TOPOLOGIES], default: CONNS_DEFAULTS.simTopology, summary: 'Embedded cluster only (no --uri): its shape.', helpGroup: 'CONNECTION'}),
  }

  async run(): Promise<ConnsListResult> {
    const {flags} = this
    const target = await this.openTarget({topology: flags['sim-topology'] as SimTopology})
    const result = await runConnsList(target, {holders: flags.holders})
    this.log(renderList(result))
    return result
  }
}
