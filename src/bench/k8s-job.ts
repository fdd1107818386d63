/**
 * `bench --emit k8s-job --parallelism N`: a Kubernetes Indexed Job whose N pods each run one
 * segment of this bench (segment.ts) from one start instant, and print their JSON result on stdout
 * for `pooltool report merge`:
 * - completionMode Indexed: pod i gets JOB_COMPLETION_INDEX=i, which its args turn into
 *   `--segment i/N` (Kubernetes expands `$(VAR)` in args from the container's environment);
 * - one --run-id (the segments' shared namespace) and one --start-at for all pods;
 * - the connection string comes from a Secret (POOLTOOL_URI), never from the manifest;
 * - stderr goes to the termination log (`kubectl get pod -o jsonpath=…terminated.message`), so the
 *   pod log holds the JSON result alone;
 * - no retries (backoffLimit 0): a retried segment would start after the others;
 * - pods spread over nodes where the cluster allows (topologySpreadConstraints).
 * The image is built from the Dockerfile shipped with pooltool.
 */

import {DEFAULT_URI_SECRET} from '../defaults.js'
import {usageError} from '../errors.js'
import {type BenchFlagValues, loadBenchConfig} from './config.js'
import {newRunId} from './namespace.js'

export interface K8sJobOptions {
  parallelism: number
  image: string
  runId: string
  /** ISO instant every segment starts measuring at. */
  startAt: string
  /** bench's own flags, passed through to every pod (no --uri: the Secret holds it). */
  benchArgs: readonly string[]
  /** Secret name and key holding the connection string. */
  uriSecret: {name: string; key: string}
}

// Defined in src/defaults.ts, which the bench command's flags read without loading this module.
export {DEFAULT_URI_SECRET}

export function jobName(runId: string): string {
  return `pooltool-bench-${runId}`
}

/** The Job as a plain object (apiVersion batch/v1), ready for YAML or JSON. */
export function k8sJobManifest(o: K8sJobOptions): Record<string, unknown> {
  const labels = {'app.kubernetes.io/name': 'pooltool', 'app.kubernetes.io/component': 'bench', 'pooltool.io/run-id': o.runId}
  const segmentArgs = ['--segment', `$(JOB_COMPLETION_INDEX)/${o.parallelism}`, '--run-id', o.runId, '--start-at', o.startAt, '--json']
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {name: jobName(o.runId), labels},
    spec: {
      completionMode: 'Indexed',
      completions: o.parallelism,
      parallelism: o.parallelism,
      backoffLimit: 0,
      ttlSecondsAfterFinished: 86_400,
      template: {
        metadata: {labels},
        spec: {
          restartPolicy: 'Never',
          topologySpreadConstraints: [{maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: {matchLabels: labels}}],
          containers: [
            {
              name: 'bench',
              image: o.image,
              command: ['/bin/sh', '-c', 'exec pooltool bench "$@" 2>/dev/termination-log', 'pooltool'],
              args: [...o.benchArgs, ...segmentArgs],
              env: [{name: 'POOLTOOL_URI', valueFrom: {secretKeyRef: {name: o.uriSecret.name, key: o.uriSecret.key}}}],
              terminationMessagePolicy: 'File',
            },
          ],
        },
      },
    },
  }
}

/** The collect-and-merge step, as shell lines for the user (printed on stderr beside the manifest). */
export function collectSteps(o: Pick<K8sJobOptions, 'parallelism' | 'runId' | 'uriSecret'>): string[] {
  const job = jobName(o.runId)
  return [
    `kubectl create secret generic ${o.uriSecret.name} --from-literal=${o.uriSecret.key}='mongodb://…'   # once`,
    `kubectl apply -f ${job}.yaml`,
    `kubectl wait --for=condition=complete --timeout=1h job/${job}`,
    `for i in $(seq 0 ${o.parallelism - 1}); do kubectl logs -l job-name=${job},batch.kubernetes.io/job-completion-index=$i > ${job}-$i.json; done`,
    `pooltool report merge ${job}-*.json --out ${job}.json`,
  ]
}

/** What `bench --emit k8s-job` prints: the manifest and how to run it. */
export interface K8sJobPlan {
  jobName: string
  /** Pods, one segment each. */
  segments: number
  runId: string
  startAt: string
  manifest: Record<string, unknown>
  /** The collect-and-merge step, shell lines. */
  collect: string[]
}

/** Flags that make no sense inside the pods, and why; the command refuses them with --emit. */
export const NOT_IN_PODS: Readonly<Record<string, string>> = {
  uri: 'the pods read the connection string from the Secret (--uri-secret): a --uri would put it in the manifest',
  'workload-file': 'the file is not in the image',
  'read-namespace': 'it goes with --workload-file, which the pods cannot read',
  out: 'each pod prints its result on stdout: collect them with kubectl logs (see the steps printed)',
  csv: 'each pod prints its result on stdout: collect them with kubectl logs',
  html: 'each pod prints its result on stdout: merge them (report merge), then draw the merged file with pooltool report html',
  segment: '--emit gives each pod its own segment',
  'run-id': '--emit chooses the run id the pods share',
  'sim-latency': 'the pods load a real cluster, not the embedded one',
}

/** The bench flags `emitK8sJob` reads (the rest reach the pods as given, in `benchArgs`). */
export type EmitFlags = BenchFlagValues & {parallelism?: number; image?: string; 'uri-secret'?: string} & Record<string, unknown>

/**
 * Checks the flags as every pod will see them (a refusal here, not in N pods), then plans the Job.
 * `benchArgs`: the user's own flags minus the emitting ones, passed through to the pods.
 */
export async function emitK8sJob(flags: EmitFlags, o: {benchArgs: readonly string[]; defaultImage: string; now?: number}): Promise<K8sJobPlan> {
  for (const [flag, why] of Object.entries(NOT_IN_PODS)) {
    if (flags[flag] !== undefined) throw usageError(`--${flag} cannot go into the emitted Job`, why)
  }
  const parallelism = flags.parallelism
  if (parallelism === undefined) throw usageError('--emit k8s-job needs --parallelism N', 'how many pods share the load, e.g. --parallelism 4')
  const secret = flags['uri-secret'] ?? `${DEFAULT_URI_SECRET.name}/${DEFAULT_URI_SECRET.key}`
  const [name, key, ...extra] = secret.split('/')
  if (!name || !key || extra.length > 0) throw usageError(`--uri-secret '${secret}' is not NAME/KEY`, 'e.g. --uri-secret pooltool-uri/uri')
  const runId = newRunId()
  const plan = planK8sJob({parallelism, image: flags.image ?? o.defaultImage, runId, startAt: flags['start-at'], uriSecret: {name, key}, benchArgs: o.benchArgs, now: o.now})
  await loadBenchConfig({...flags, segment: `0/${parallelism}`, 'run-id': runId, 'start-at': plan.startAt})
  return plan
}

/** Default start: far enough ahead for the pods to be scheduled and pull the image. */
export const DEFAULT_START_DELAY_MS = 120_000

export function planK8sJob(o: Omit<K8sJobOptions, 'startAt'> & {startAt?: string; now?: number}): K8sJobPlan {
  const startAt = o.startAt ?? new Date((o.now ?? Date.now()) + DEFAULT_START_DELAY_MS).toISOString()
  const options = {...o, startAt}
  return {jobName: jobName(o.runId), segments: o.parallelism, runId: o.runId, startAt, manifest: k8sJobManifest(options), collect: collectSteps(options)}
}
