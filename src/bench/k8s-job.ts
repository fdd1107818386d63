/**
 * `bench --emit k8s-job --parallelism N`: a Kubernetes Indexed Job whose N pods each run one
 * segment of this bench (segment.ts), all from one start, and print their JSON result on stdout for
 * `pooltool report merge`. Kubernetes 1.24 or later (Indexed Jobs GA; every field used is GA there,
 * K8S_FIELDS_SINCE below, checked by the tests):
 * - completionMode Indexed: pod i gets JOB_COMPLETION_INDEX=i, which its args turn into
 *   `--segment i/N` (Kubernetes expands `$(VAR)` in args from the container's environment);
 * - one --run-id (the segments' shared namespace) and `--start-at all-ready` (start-barrier.ts): the
 *   pods start together once all are set up, however long scheduling and image pulls take, through
 *   the database they load (no Kubernetes API access, so no RBAC); an instant can still be given;
 * - the connection string comes from a Secret (POOLTOOL_URI), never from the manifest;
 * - stderr goes to the termination log (`kubectl get pod -o jsonpath=…terminated.message`), so the
 *   pod log holds the JSON result alone;
 * - no retries (backoffLimit 0): a retried segment would start after the others, so one failed pod
 *   fails the Job at once (condition Failed), which ends the printed wait; activeDeadlineSeconds
 *   fails it too when a pod never runs;
 * - CPU and memory requests equal to their limits (Guaranteed QoS: the pod's share of the node is
 *   reserved, so a run measures the same capacity each time);
 * - pods carry pooltool's own labels (pooltool.io/run-id), which every version keeps as given: the
 *   collect step selects by it, not by the controller's labels (job-name changed names in 1.27, the
 *   completion-index label appeared only in 1.28); a pod's index is read from its annotation
 *   batch.kubernetes.io/job-completion-index (there since Indexed Jobs were introduced, 1.21);
 * - pods spread over nodes where the cluster allows (topologySpreadConstraints).
 * The image is built from the Dockerfile shipped with pooltool.
 */

import {DEFAULT_CPU_PER_WORKER, DEFAULT_MEMORY_MIB_PER_WORKER, DEFAULT_URI_SECRET} from '../defaults.js'
import {usageError} from '../errors.js'
import {type BenchFlagValues, loadBenchConfig} from './config.js'
import {newRunId} from './namespace.js'
import {START_ALL_READY} from './segment.js'
import {READY_TIMEOUT_MS, startMarginMs} from './start-barrier.js'

/** The oldest Kubernetes the emitted Job runs on: Indexed Jobs (completionMode, JOB_COMPLETION_INDEX) are GA from 1.24. */
export const MIN_KUBERNETES = '1.24'

/**
 * Every field path the emitted manifest uses, with the Kubernetes version from which the API server
 * accepts it by default (GA, or beta enabled by default). The tests check that the manifest uses no
 * other path and that none is newer than MIN_KUBERNETES: a field an older server does not know is
 * dropped with a warning, or refused by `kubectl apply` (strict field validation, 1.27+ clients).
 */
export const K8S_FIELDS_SINCE: Readonly<Record<string, string>> = {
  apiVersion: '1.0',
  kind: '1.0',
  'metadata.name': '1.0',
  'metadata.labels': '1.0',
  'spec.completionMode': '1.24', // Indexed Jobs: alpha 1.21, beta (on by default) 1.22, GA 1.24
  'spec.completions': '1.0',
  'spec.parallelism': '1.0',
  'spec.backoffLimit': '1.8',
  'spec.activeDeadlineSeconds': '1.2',
  'spec.ttlSecondsAfterFinished': '1.23', // GA 1.23
  'spec.template.metadata.labels': '1.0',
  'spec.template.spec.restartPolicy': '1.0',
  'spec.template.spec.topologySpreadConstraints': '1.19', // GA 1.19
  'spec.template.spec.containers': '1.0',
  'spec.template.spec.containers.name': '1.0',
  'spec.template.spec.containers.image': '1.0',
  'spec.template.spec.containers.command': '1.0',
  'spec.template.spec.containers.args': '1.0',
  'spec.template.spec.containers.env': '1.0',
  'spec.template.spec.containers.resources.requests': '1.0',
  'spec.template.spec.containers.resources.limits': '1.0',
  'spec.template.spec.containers.terminationMessagePolicy': '1.7',
}

export interface K8sResources {
  /** Kubernetes quantities, e.g. cpu '1' or '500m', memory '512Mi'; each the request and the limit. */
  cpu: string
  memory: string
}

export interface K8sJobOptions {
  parallelism: number
  image: string
  runId: string
  /** Every segment's --start-at: all-ready (the default), or an ISO instant. */
  startAt: string
  /** bench's own flags, passed through to every pod (no --uri: the Secret holds it). */
  benchArgs: readonly string[]
  /** Secret name and key holding the connection string. */
  uriSecret: {name: string; key: string}
  resources: K8sResources
  /** The Job fails this long after it starts, whatever its pods do; absent: no deadline (a run bounded by --ops). */
  activeDeadlineSeconds?: number
}

// Defined in src/defaults.ts, which the bench command's flags read without loading this module.
export {DEFAULT_CPU_PER_WORKER, DEFAULT_MEMORY_MIB_PER_WORKER, DEFAULT_URI_SECRET}
/** Beyond the start and the load: image pulls before the barrier, then the end of the run (drop, close). */
const DEADLINE_SLACK_MS = 10 * 60_000

export function jobName(runId: string): string {
  return `pooltool-bench-${runId}`
}

/** The label every pod of the run carries, set by pooltool (not by the Job controller): the collect step selects by it. */
export const RUN_ID_LABEL = 'pooltool.io/run-id'

/** The Job as a plain object (apiVersion batch/v1), ready for YAML or JSON. */
export function k8sJobManifest(o: K8sJobOptions): Record<string, unknown> {
  const labels = {'app.kubernetes.io/name': 'pooltool', 'app.kubernetes.io/component': 'bench', [RUN_ID_LABEL]: o.runId}
  const segmentArgs = ['--segment', `$(JOB_COMPLETION_INDEX)/${o.parallelism}`, '--run-id', o.runId, '--start-at', o.startAt, '--json']
  const quantities = {cpu: o.resources.cpu, memory: o.resources.memory}
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {name: jobName(o.runId), labels},
    spec: {
      completionMode: 'Indexed',
      completions: o.parallelism,
      parallelism: o.parallelism,
      backoffLimit: 0,
      ...(o.activeDeadlineSeconds === undefined ? {} : {activeDeadlineSeconds: o.activeDeadlineSeconds}),
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
              resources: {requests: quantities, limits: quantities},
              terminationMessagePolicy: 'File',
            },
          ],
        },
      },
    },
  }
}

/**
 * The steps around the manifest, as shell lines (printed on stderr beside it; docs/kubernetes.md
 * shows the same lines, a test keeps them in step). POSIX sh, kubectl of any version from 1.24:
 * - the wait polls the Job's conditions and ends on Complete or Failed (`kubectl wait` takes one
 *   condition and would wait out its timeout on the other);
 * - each pod's log is read by the pod's name: with a selector (`kubectl logs -l`) kubectl prints
 *   only the last 10 lines of each pod, which cuts every JSON result;
 * - only pods that succeeded are collected; a failed one's stderr is its termination message.
 */
export function collectSteps(o: Pick<K8sJobOptions, 'runId' | 'image' | 'uriSecret'>): string[] {
  const job = jobName(o.runId)
  const pods = `kubectl get pods -l ${RUN_ID_LABEL}=${o.runId}`
  return [
    `docker build -t ${o.image} . && docker push ${o.image}   # in a pooltool checkout, once per version`,
    `kubectl create secret generic ${o.uriSecret.name} --from-literal=${o.uriSecret.key}='mongodb://…'   # once`,
    `kubectl apply -f job.yaml   # the Job printed on stdout`,
    `while :; do s=$(kubectl get job/${job} -o jsonpath='{.status.conditions[?(@.status=="True")].type}'); case "$s" in *Complete*|*Failed*) break;; esac; sleep 10; done; echo "job/${job}: $s"`,
    `${pods} -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.phase}{" "}{.status.containerStatuses[0].state.terminated.reason}{": "}{.status.containerStatuses[0].state.terminated.message}{"\\n"}{end}'   # each pod's end, and why (its stderr)`,
    `for p in $(${pods} --field-selector=status.phase=Succeeded -o name); do`,
    `  i=$(kubectl get "$p" -o jsonpath='{.metadata.annotations.batch\\.kubernetes\\.io/job-completion-index}')`,
    `  kubectl logs "$p" > ${job}-$i.json`,
    `done`,
    `pooltool report merge ${job}-*.json --out ${job}.json`,
  ]
}

/** What `bench --emit k8s-job` prints: the manifest and how to run it. */
export interface K8sJobPlan {
  jobName: string
  /** Pods, one segment each. */
  segments: number
  runId: string
  /** all-ready, or the instant given. */
  startAt: string
  resources: K8sResources
  manifest: Record<string, unknown>
  /** The steps around the manifest (build, apply, wait, collect, merge), shell lines. */
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
export type EmitFlags = BenchFlagValues & {parallelism?: number; image?: string; 'uri-secret'?: string; 'k8s-cpu'?: string; 'k8s-memory'?: string} & Record<string, unknown>

/** A Secret's name (a DNS subdomain, RFC 1123) and a key in it (ConfigMap/Secret key rules). */
const SECRET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/
/** An OCI image reference as docker and the kubelet read it: [registry[:port]/]path[:tag][@digest], lower-case path. */
const IMAGE_REFERENCE = /^(?:[a-zA-Z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,})?$/

/**
 * A Kubernetes quantity (resource.Quantity) as a request or limit: a plain non-negative decimal with
 * an optional suffix (binary Ki Mi Gi Ti Pi Ei, decimal m k M G T P E, or an exponent e3), above 0.
 * Memory in `m` (thousandths of a byte) is refused: `512m` is the classic slip for 512Mi.
 */
export function parseQuantity(flag: '--k8s-cpu' | '--k8s-memory', text: string): string {
  const example = flag === '--k8s-cpu' ? 'e.g. --k8s-cpu 2 or --k8s-cpu 500m' : 'e.g. --k8s-memory 512Mi or --k8s-memory 2Gi'
  const match = /^(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/.exec(text)
  if (!match) throw usageError(`${flag} '${text}' is not a Kubernetes quantity`, example)
  if (Number(match[1]) === 0) throw usageError(`${flag} ${text} is zero`, `give the pod some: ${example}`)
  if (flag === '--k8s-memory' && match[2] === 'm') throw usageError(`--k8s-memory ${text} is ${match[1]} thousandths of a byte`, `write Mi for mebibytes: --k8s-memory ${match[1]}Mi`)
  if (flag === '--k8s-cpu' && match[2] === undefined && /\.\d{4,}/.test(match[1]!)) throw usageError(`--k8s-cpu ${text} is finer than a thousandth of a core`, 'Kubernetes counts CPU in millicores: e.g. --k8s-cpu 500m')
  return text
}

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
  // Both go into the manifest and into the printed shell lines: only what Kubernetes accepts, nothing a shell reads as code.
  if (!SECRET_NAME.test(name) || name.length > 253) throw usageError(`--uri-secret: '${name}' is not a Secret name`, 'lower-case letters, digits, - and ., starting and ending with a letter or digit, e.g. --uri-secret pooltool-uri/uri')
  if (!SECRET_KEY.test(key) || key.length > 253) throw usageError(`--uri-secret: '${key}' is not a Secret key`, 'letters, digits, -, _ and ., e.g. --uri-secret pooltool-uri/uri')
  const image = flags.image ?? o.defaultImage
  if (!IMAGE_REFERENCE.test(image)) throw usageError(`--image '${image}' is not an image reference`, 'REGISTRY/NAME:TAG, e.g. --image registry.example/pooltool:0.1.0')
  const runId = newRunId()
  const startAt = flags['start-at'] ?? START_ALL_READY
  const config = await loadBenchConfig({...flags, segment: `0/${parallelism}`, 'run-id': runId, 'start-at': startAt})
  const workers = config.workers
  const resources = {
    cpu: flags['k8s-cpu'] === undefined ? String(DEFAULT_CPU_PER_WORKER * workers) : parseQuantity('--k8s-cpu', flags['k8s-cpu']),
    memory: flags['k8s-memory'] === undefined ? `${DEFAULT_MEMORY_MIB_PER_WORKER * workers}Mi` : parseQuantity('--k8s-memory', flags['k8s-memory']),
  }
  const now = o.now ?? Date.now()
  const startWaitMs = config.startAt instanceof Date ? Math.max(0, config.startAt.getTime() - now) : READY_TIMEOUT_MS + startMarginMs(parallelism)
  const activeDeadlineSeconds = config.durationMs === undefined ? undefined : Math.ceil((startWaitMs + config.warmupMs + config.durationMs + DEADLINE_SLACK_MS) / 1000)
  const options: K8sJobOptions = {parallelism, image, runId, startAt, uriSecret: {name, key}, benchArgs: o.benchArgs, resources, ...(activeDeadlineSeconds === undefined ? {} : {activeDeadlineSeconds})}
  return {jobName: jobName(runId), segments: parallelism, runId, startAt, resources, manifest: k8sJobManifest(options), collect: collectSteps(options)}
}
