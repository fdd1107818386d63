/**
 * "The same configuration" for `report compare`: every setting a bench result
 * records that changes its figures, named as the bench flag that sets it, so a
 * refusal can say which settings differ and `--pair SETTING,…` can name the
 * ones that differ on purpose.
 *
 * Two kinds: settings of the whole file (target, server, workload, latency
 * injection, …), which must be equal unless paired; and settings of each run
 * (model, concurrency, pool size, rate), by which runs are matched: a paired
 * run setting is left out of the match, so "pool=100" meets "pool=10".
 *
 * A setting a file does not record (written before bench recorded it) is
 * unknown: it is not held against the comparison, but said in a note.
 */
import type {BenchResult, RunResult} from '../bench/types.js'
import type {SettingDifference} from './types.js'

export type {SettingDifference}

export interface Setting {
  /** As the bench flag (without --), e.g. `sim-latency`: what --pair takes. */
  name: string
  /** undefined: the file does not record it. */
  read: (result: BenchResult) => string | undefined
}

export interface RunSetting {
  name: string
  read: (run: RunResult) => string
}

/** "mongodb://user:***@a:1,b:2/db?x" → "a:1,b:2": the hosts only (a redacted URI carries no secret, but the hosts are what matters). */
export function uriHosts(uri: string): string {
  const rest = uri.replace(/^[a-z+]+:\/\//i, '')
  const authority = rest.split(/[/?]/, 1)[0] ?? ''
  const hosts = authority.slice(authority.lastIndexOf('@') + 1)
  return hosts.split(',').filter((host) => host !== '').sort().join(',')
}

const ms = (value: number | undefined) => (value === undefined ? undefined : `${value}ms`)

function workloadOf(result: BenchResult): string {
  const {config} = result
  if (config.workloadFile) return `file ${config.workloadFile.operations.map((op) => `${op.name}=${op.weight}`).join(',')}${config.workloadFile.readNamespace ? ` reading ${config.workloadFile.readNamespace}` : ''}`
  const mix = config.mix && Object.keys(config.mix).length > 0 ? ` ${Object.entries(config.mix).map(([op, weight]) => `${op}=${weight}`).join(',')}` : ''
  return `${config.workload}${mix}`
}

function poolOptionsOf(result: BenchResult): string | undefined {
  const options = result.config.poolOptions
  if (options === undefined) return undefined
  const set = Object.entries(options).filter(([, value]) => value !== undefined && value !== null)
  return set.length === 0 ? 'driver defaults' : set.map(([name, value]) => `${name}=${value}`).join(',')
}

function lengthOf(result: BenchResult): string {
  const {config} = result
  if (config.stages) return `stages ${config.stages.map((stage) => `${stage.durationMS}ms:${stage.rate ?? stage.concurrency}`).join(',')}`
  if (config.ops !== undefined && config.ops !== null) return `${config.ops} ops`
  return ms(config.durationMS ?? undefined) ?? 'unknown'
}

/** The file-level settings, in the order a refusal lists them. */
export const FILE_SETTINGS: readonly Setting[] = [
  // Embedded: the port changes every run and means nothing; a real cluster: its hosts (the URI is stored redacted).
  {name: 'target', read: (r) => (r.target.simulated ? 'embedded cluster' : uriHosts(r.target.uri))},
  {name: 'server', read: (r) => (r.cluster.topology === 'unknown' ? undefined : `${r.cluster.topology} ${r.cluster.serverVersion}`)},
  {name: 'sim-latency', read: (r) => (r.target.simulated ? ms(r.config.simLatencyMS) : 'none (real cluster)')},
  {name: 'workload', read: workloadOf},
  // The content, not the path: the same file edited is another workload, a copy elsewhere the same one.
  {name: 'workload-file', read: (r) => (r.config.workloadFile ? (r.config.workloadFile.sha256 === undefined ? undefined : `sha256 ${r.config.workloadFile.sha256.slice(0, 12)}`) : 'none')},
  {name: 'doc-size', read: (r) => `${r.config.docSizeBytes}B`},
  {name: 'seed-docs', read: (r) => (r.config.seedDocs === undefined ? undefined : String(r.config.seedDocs))},
  {name: 'key-dist', read: (r) => r.config.keyDist ?? undefined},
  {name: 'op-timeout', read: (r) => (r.config.opTimeout ? `${r.config.opTimeout.ms}ms ${r.config.opTimeout.side}` : 'none')},
  {name: 'pool-options', read: poolOptionsOf},
  // auto: each run's length differs by design (until it settles); two auto runs are alike, whatever their lengths.
  {name: 'warmup', read: (r) => (r.config.warmup?.mode === 'auto' ? 'auto' : ms(r.config.warmupMS ?? undefined))},
  {name: 'duration', read: lengthOf},
  {name: 'workers', read: (r) => String(r.config.workers ?? 1)},
  // One process's figures and the sum of several segments' are not the same measurement.
  {name: 'segments', read: (r) => String((r as {segments?: number}).segments ?? (r.config.segment ? `1 of ${r.config.segment.count}` : 1))},
]

/** The run-level settings: runs are matched on those not paired. */
export const RUN_SETTINGS: readonly RunSetting[] = [
  {name: 'model', read: (run) => run.model},
  {name: 'concurrency', read: (run) => String(run.concurrency)},
  {name: 'max-pool-size', read: (run) => (run.maxPoolSize === null ? 'driver default' : String(run.maxPoolSize))},
  {name: 'rate', read: (run) => (run.rate === null ? 'closed loop' : `${run.rate}/s`)},
]

export const SETTING_NAMES: readonly string[] = [...FILE_SETTINGS.map((s) => s.name), ...RUN_SETTINGS.map((s) => s.name)]


export interface FileSettingsCheck {
  differ: SettingDifference[]
  /** Settings one file (or both) does not record: not checked. */
  unknown: Array<{setting: string; files: string[]}>
}

export function compareFileSettings(baseFile: string, base: BenchResult, newFile: string, next: BenchResult): FileSettingsCheck {
  const differ: SettingDifference[] = []
  const unknown: FileSettingsCheck['unknown'] = []
  for (const setting of FILE_SETTINGS) {
    const a = setting.read(base)
    const b = setting.read(next)
    if (a === undefined || b === undefined) {
      unknown.push({setting: setting.name, files: [...(a === undefined ? [baseFile] : []), ...(b === undefined ? [newFile] : [])]})
    } else if (a !== b) differ.push({setting: setting.name, base: a, new: b})
  }
  return {differ, unknown}
}

/** The run settings in which two runs differ. */
export function runDifferences(base: RunResult, next: RunResult): SettingDifference[] {
  return RUN_SETTINGS.map((setting) => ({setting: setting.name, base: setting.read(base), new: setting.read(next)})).filter((d) => d.base !== d.new)
}

/** The key runs are matched by: every run setting not paired. */
export function matchKey(run: RunResult, paired: ReadonlySet<string>): string {
  return RUN_SETTINGS.filter((setting) => !paired.has(setting.name))
    .map((setting) => `${setting.name}=${setting.read(run)}`)
    .join(' ')
}
