/**
 * `bench --workload-file FILE`: the user's own operations, JSON or YAML:
 *
 *   operations:
 *     - name: lookup                 # the name latency is kept under (runs[].latencyByOpUs)
 *       weight: 80                   # relative share of the draws (default 1)
 *       find: {filter: {_id: "{{seededId}}"}}
 *     - name: recent
 *       weight: 10
 *       namespace: read              # --read-namespace db.coll instead of pooltool's own collection
 *       aggregate: {pipeline: [{$match: {status: "{{choice open closed}}"}}, {$limit: 10}]}
 *     - name: add
 *       weight: 10
 *       insert: {document: {n: "{{int 0 100}}", at: "{{now}}"}}
 *
 * Kinds: find {filter, projection, sort, limit}, aggregate {pipeline}, insert {document},
 * update {filter, update, upsert, multi}, command (one of the read-only commands below, run on
 * pooltool's database). Templates: templates.ts.
 *
 * Do no harm, checked before anything is written: insert and update go only to pooltool's own
 * collection; the read namespace takes find and aggregate without $out / $merge; command is limited
 * to commands that change nothing and name no collection. A file that breaks a rule is refused
 * with one line naming the operation and the field at fault.
 */
import {createHash} from 'node:crypto'

import {isNode, parseDocument, visit} from 'yaml'
import {z} from 'zod'

import {usageError} from '../errors.js'
import {readUserFile} from '../input.js'
import type {Collection, Document} from '../mongo/driver.js'
import {compileValue, TemplateError, type TemplateContext} from './templates.js'

/** Commands a workload file may send: they change nothing and name no collection. */
export const READ_ONLY_COMMANDS = ['ping', 'hello', 'isMaster', 'buildInfo', 'connectionStatus', 'listCommands', 'hostInfo'] as const

const KINDS = ['find', 'aggregate', 'insert', 'update', 'command'] as const
export type FileOperationKind = (typeof KINDS)[number]
const WRITE_KINDS: readonly FileOperationKind[] = ['insert', 'update']

const documentSchema = z.record(z.string(), z.unknown())
const operationSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z][\w.-]{0,63}$/, 'a letter, then up to 63 letters, digits, _ . or -'),
    weight: z.number().positive().finite().default(1),
    namespace: z.enum(['own', 'read']).default('own'),
    find: z
      .object({filter: documentSchema.default({}), projection: documentSchema.optional(), sort: documentSchema.optional(), limit: z.number().int().min(0).max(100_000).default(1)})
      .strict()
      .optional(),
    aggregate: z.object({pipeline: z.array(documentSchema)}).strict().optional(),
    insert: z.object({document: documentSchema}).strict().optional(),
    update: z
      .object({filter: documentSchema, update: z.union([documentSchema, z.array(documentSchema)]), upsert: z.boolean().default(false), multi: z.boolean().default(false)})
      .strict()
      .optional(),
    command: documentSchema.optional(),
  })
  .strict()
const fileSchema = z.object({operations: z.array(operationSchema).min(1, 'at least one operation')}).strict()

type ParsedOperation = z.infer<typeof operationSchema>

/** What bench reports of the file (config.workloadFile). */
export interface WorkloadFileSummary {
  path: string
  /** SHA-256 of the file's bytes as read (absent when compiled from text alone): `report compare` tells an edited file from the same one under the same path. */
  sha256?: string
  operations: Array<{name: string; kind: FileOperationKind; weight: number; namespace: 'own' | 'read'}>
}

/** What one operation runs against. */
export interface FileOperationTargets {
  own: Collection
  /** --read-namespace; present whenever an operation uses it. */
  read?: Collection
  /** pooltool's database, for commands. */
  runCommand(command: Document): Promise<unknown>
  /** --timeout-side server: maxTimeMS on every operation (else {}). */
  limit: {maxTimeMS?: number}
}

export interface FileOperation {
  name: string
  kind: FileOperationKind
  weight: number
  run(targets: FileOperationTargets, ctx: TemplateContext): Promise<unknown>
}

export interface WorkloadFile {
  summary: WorkloadFileSummary
  operations: readonly FileOperation[]
  /** db and collection of --read-namespace, when given. */
  readNamespace?: {db: string; collection: string}
}

const HINT = 'see pooltool bench --help (workload files) for the format'

/** Parses `--read-namespace db.coll`. */
export function parseReadNamespace(text: string): {db: string; collection: string} {
  const dot = text.indexOf('.')
  if (dot <= 0 || dot === text.length - 1 || /[\s/\\"$]/.test(text.slice(0, dot))) {
    throw usageError(`--read-namespace '${text}' is not db.collection`, 'e.g. --read-namespace shop.orders')
  }
  return {db: text.slice(0, dot), collection: text.slice(dot + 1)}
}

/**
 * 1 MiB: a workload file is a list of operations, each a few lines; 1 MiB holds thousands of them.
 * A bigger file is not a workload, and parsing it is not free (YAML reads a 58 MB file in 91 s and
 * 3.3 GB): the size is checked before a byte is read.
 */
export const MAX_WORKLOAD_FILE_BYTES = 1024 * 1024

/**
 * YAML aliases (`*name`) a file may use. Each one expands to a copy of what it names, so a few
 * nested ones make gigabytes (billion laughs); yaml refuses a document that uses more than this.
 */
const MAX_ALIASES = 100

export async function loadWorkloadFile(path: string, readNamespace: string | undefined): Promise<WorkloadFile> {
  const text = await readUserFile(path, `--workload-file ${path}`, 'give the path of a JSON or YAML file', {maxBytes: MAX_WORKLOAD_FILE_BYTES, what: 'a workload file'})
  try {
    const compiled = compileWorkloadFile(path, parseWorkloadText(path, text), readNamespace === undefined ? undefined : parseReadNamespace(readNamespace))
    return {...compiled, summary: {...compiled.summary, sha256: createHash('sha256').update(text).digest('hex')}}
  } catch (error) {
    // 1 MiB of [ nests deeper than the walks over the file (recursive) can go.
    if (isStackOverflow(error)) throw usageError(`workload file ${path} nests too deeply to be a workload file`, HINT)
    throw error
  }
}

const isStackOverflow = (error: unknown): boolean => error instanceof RangeError && /call stack/i.test(error.message)

/**
 * JSON (a .json file, or text that starts with { or [) with JSON.parse: the YAML parser reads JSON too,
 * but far slower. YAML without tags: yaml resolves !!omap, !!set, !!binary and !!timestamp to a Map, a
 * Set, bytes or a Date, which the checks below do not see into (a `$out` stage in an !!omap was sent
 * as it is) and a file has no use for; any tag, known or not, is refused.
 */
export function parseWorkloadText(path: string, text: string): unknown {
  const doesNotParse = (why: string) => usageError(`workload file ${path} does not parse: ${why}`, HINT)
  const body = text.replace(/^\uFEFF/, '')
  if (/\.json$/i.test(path) || /^\s*[{[]/.test(body)) {
    try {
      return JSON.parse(body)
    } catch (error) {
      throw doesNotParse(`not JSON (${(error as Error).message.split('\n')[0]})`)
    }
  }
  const doc = parseDocument(body, {schema: 'core', customTags: [], resolveKnownTags: false, merge: false, uniqueKeys: true})
  const problem = doc.errors[0]
  if (problem) throw doesNotParse(problem.message.split('\n')[0]!)
  let tagged: {tag: string; line: number} | undefined
  visit(doc, (_key, node) => {
    if (isNode(node) && node.tag !== undefined && tagged === undefined) {
      // The node's range starts after its tag (a tagged list starts on the next line): the tag is the last ! before it.
      tagged = {tag: node.tag, line: node.range ? lineOf(body, body.lastIndexOf('!', node.range[0])) : 0}
      return visit.BREAK
    }
    return undefined
  })
  if (tagged) {
    const shown = tagged.tag.replace(/^tag:yaml\.org,2002:/, '!!')
    throw usageError(`workload file ${path}: line ${tagged.line}: the YAML tag ${shown} is not allowed (plain maps, lists, strings, numbers, booleans and null only)`, HINT)
  }
  try {
    return doc.toJS({maxAliasCount: MAX_ALIASES})
  } catch (error) {
    // yaml's words for too many aliases: "Excessive alias count indicates a resource exhaustion attack".
    throw doesNotParse((error as Error).message.split('\n')[0]!)
  }
}

/** The 1-based line of a character offset, for the message. */
function lineOf(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/** Where a value that is not JSON data (a Map, a Set, bytes, a Date: anything but plain objects, arrays, strings, finite numbers, booleans, null) sits. */
function notPlainData(value: unknown, path: Array<string | number> = []): Array<string | number> | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = notPlainData(item, [...path, index])
      if (found) return found
    }
    return undefined
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, item] of Object.entries(value)) {
      const found = notPlainData(item, [...path, key])
      if (found) return found
    }
    return undefined
  }
  return path
}

/** Validates and compiles a parsed file; every refusal is one line naming the operation and field. */
export function compileWorkloadFile(path: string, data: unknown, readNamespace?: {db: string; collection: string}): WorkloadFile {
  const raw = data as {operations?: Array<{name?: unknown}>} | undefined
  /** `operation 'x'` (or its index when it has no usable name) for a path into the file. */
  const where = (issuePath: readonly PropertyKey[]): string => {
    if (issuePath[0] !== 'operations' || typeof issuePath[1] !== 'number') return issuePath.length === 0 ? '' : `${issuePath.map(String).join('.')}: `
    const index = issuePath[1]
    const name = raw?.operations?.[index]?.name
    const field = issuePath.slice(2).map(String).join('.')
    return `operation ${typeof name === 'string' ? `'${name}'` : `#${index + 1}`}${field ? ` field ${field}` : ''}: `
  }
  // Only JSON data is checked below (a Map's entries are invisible to the $out walk): anything else is refused first.
  const odd = notPlainData(data)
  if (odd) throw usageError(`workload file ${path}: ${where(odd)}is not plain JSON data (a map, list, string, finite number, boolean or null)`, HINT)
  const parsed = fileSchema.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw usageError(`workload file ${path}: ${where(issue.path)}${issue.message}`, HINT)
  }
  const refuse = (index: number, field: string, message: string) => {
    throw usageError(`workload file ${path}: ${where(['operations', index, ...(field ? field.split('.') : [])])}${message}`, HINT)
  }
  const seen = new Set<string>()
  const operations = parsed.data.operations.map((op, index) => {
    if (seen.has(op.name)) refuse(index, 'name', `the name '${op.name}' is used twice`)
    seen.add(op.name)
    const kinds = KINDS.filter((kind) => op[kind] !== undefined)
    if (kinds.length !== 1) refuse(index, '', `give exactly one of ${KINDS.join(', ')} (found ${kinds.length === 0 ? 'none' : kinds.join(', ')})`)
    const kind = kinds[0]!
    checkHarmless(op, kind, index, readNamespace, refuse)
    try {
      return compileOperation(op, kind)
    } catch (error) {
      if (error instanceof TemplateError) refuse(index, `${kind}.${error.path}`, error.message)
      throw error
    }
  })
  return {
    summary: {path, operations: parsed.data.operations.map((op, i) => ({name: op.name, kind: operations[i]!.kind, weight: op.weight, namespace: op.namespace}))},
    operations,
    ...(readNamespace ? {readNamespace} : {}),
  }
}

/** The rules that keep a workload file from changing anything but pooltool's own collection. */
function checkHarmless(
  op: ParsedOperation,
  kind: FileOperationKind,
  index: number,
  readNamespace: {db: string; collection: string} | undefined,
  refuse: (index: number, field: string, message: string) => never,
): void {
  if (op.namespace === 'read') {
    if (!readNamespace) refuse(index, 'namespace', 'reads the read namespace, but no --read-namespace db.coll was given')
    if (WRITE_KINDS.includes(kind)) {
      refuse(index, 'namespace', `${kind} writes, and writes go only to pooltool's own collection, never to ${readNamespace!.db}.${readNamespace!.collection}`)
    }
  }
  if (kind === 'aggregate') {
    const writer = writingStage(op.aggregate!.pipeline)
    if (writer) refuse(index, 'aggregate.pipeline', `${writer} writes; a workload file's pipelines only read`)
  }
  if (kind === 'command') {
    const name = Object.keys(op.command!)[0]
    if (op.namespace === 'read') refuse(index, 'namespace', 'a command runs on pooltool\'s database, not the read namespace')
    if (!name || !(READ_ONLY_COMMANDS as readonly string[]).includes(name)) {
      refuse(index, 'command', `'${name ?? ''}' is not a command bench sends (allowed: ${READ_ONLY_COMMANDS.join(', ')})`)
    }
  }
}

/** `$out` or `$merge` anywhere in a pipeline (nested ones in $facet / $lookup / $unionWith included). */
function writingStage(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = writingStage(item)
      if (found) return found
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$out' || key === '$merge') return key
      const found = writingStage(item)
      if (found) return found
    }
  }
  return undefined
}

function compileOperation(op: ParsedOperation, kind: FileOperationKind): FileOperation {
  const on = (targets: FileOperationTargets): Collection => (op.namespace === 'read' ? targets.read! : targets.own)
  const base = {name: op.name, kind, weight: op.weight}
  switch (kind) {
    case 'find': {
      const {filter, projection, sort, limit} = op.find!
      const makeFilter = compileValue(filter, 'filter')
      return {...base, run: (targets, ctx) => on(targets).find(makeFilter(ctx) as Document, {projection, sort: sort as Document | undefined, limit, ...targets.limit}).toArray()}
    }
    case 'aggregate': {
      const makePipeline = compileValue(op.aggregate!.pipeline, 'pipeline')
      return {...base, run: (targets, ctx) => on(targets).aggregate(makePipeline(ctx) as Document[], targets.limit).toArray()}
    }
    case 'insert': {
      const makeDocument = compileValue(op.insert!.document, 'document')
      // A copy each time: the driver sets _id on the document it is given.
      return {...base, run: (targets, ctx) => targets.own.insertOne({...(makeDocument(ctx) as Document)}, targets.limit)}
    }
    case 'update': {
      const {filter, update, upsert, multi} = op.update!
      const makeFilter = compileValue(filter, 'filter')
      const makeUpdate = compileValue(update, 'update')
      return {
        ...base,
        run: (targets, ctx) =>
          multi
            ? targets.own.updateMany(makeFilter(ctx) as Document, makeUpdate(ctx) as Document, {upsert, ...targets.limit})
            : targets.own.updateOne(makeFilter(ctx) as Document, makeUpdate(ctx) as Document, {upsert, ...targets.limit}),
      }
    }
    case 'command': {
      const makeCommand = compileValue(op.command!, 'command')
      return {...base, run: (targets, ctx) => targets.runCommand({...(makeCommand(ctx) as Document), ...targets.limit})}
    }
  }
}
