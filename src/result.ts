/**
 * The envelope every command's `--json` result shares, so a script can read
 * any of them the same way: which cluster (credentials redacted), whether it
 * was the embedded one, what pooltool wants the reader to know, and whether a
 * signal cut the command short. Each command adds its own fields beside these.
 *
 *   {"target": {"uri", "source", "simulated"}, …, "notes": [], "interrupted": false}
 *
 * Field names carry their units as the driver writes them: `durationMS`,
 * `intervalMS`, and `Us` for microseconds (`latencyUs`).
 */
import type {Target, TargetSource} from './target.js'

export interface TargetSummary {
  /** The connection string with credentials redacted. */
  uri: string
  source: TargetSource
  simulated: boolean
}

export interface ResultEnvelope {
  target: TargetSummary
  /** Sentences for the reader: what could not be read, what a figure means, what was left behind. */
  notes: string[]
  /** A signal (or a closed stdout) stopped the command before it was done; what is here was measured. */
  interrupted: boolean
}

export function targetSummary(target: Target): TargetSummary {
  return {uri: target.redactedUri, source: target.source, simulated: target.simulated}
}
