/**
 * oclif's help, fitted to the terminal like every other text pooltool prints: oclif wraps at its
 * own idea of the width (80 off a terminal, a column more for some flag lines) and leaves the
 * command's summary and examples unwrapped. Named in package.json (oclif.helpClass).
 */
import {Help} from '@oclif/core'

import {fitText} from '../reporters/fit.js'
import {stdoutLayout} from './terminal.js'

export default class PooltoolHelp extends Help {
  protected override log(...args: string[]): void {
    const layout = stdoutLayout(this.opts.sendToStderr ? process.stderr : process.stdout)
    super.log(...args.map((text) => fitText(text, layout)))
  }
}
