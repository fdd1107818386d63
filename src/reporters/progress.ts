/**
 * The live line on stderr (ora). Silent under --json and when stderr is not a
 * terminal, so pipes and CI logs get only the final report.
 */
import ora, {type Ora} from 'ora'

export interface Progress {
  update(text: string): void
  stop(): void
}

export function createProgress(options: {json: boolean; stream?: NodeJS.WriteStream}): Progress {
  const stream = options.stream ?? process.stderr
  const enabled = !options.json && stream.isTTY === true
  if (!enabled) return {update() {}, stop() {}}
  const spinner: Ora = ora({stream, isSilent: false, discardStdin: false})
  return {
    update(text) {
      spinner.text = text
      if (!spinner.isSpinning) spinner.start()
    },
    stop() {
      spinner.stop()
    },
  }
}
