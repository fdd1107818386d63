/**
 * Commands are registered in a table keyed by the name the client sends. A spec carries
 * everything the dispatcher needs besides the handler: the canonical name counted in
 * metrics.commands, whether it may run before authentication, the privilege it needs,
 * whether it writes (so it needs a writable primary and the collection's write queue),
 * and how it shows in opcounters and currentOp.
 */
import type {Document} from 'bson'
import type {Requirement} from '../auth/roles.js'
import type {ClientConnection} from '../server/connection.js'
import type {SimProcess} from '../process.js'
import type {OpCounter} from '../status/counters.js'
import type {AllowedOnSecondary} from '../repl/secondary-ok.js'

export interface CommandContext {
  proc: SimProcess
  conn: ClientConnection
  /** The command document (document sequences merged in). */
  cmd: Document
  /** `$db` (OP_MSG) or the database of `<db>.$cmd` (OP_QUERY). */
  db: string
  /** The name the client used (e.g. `ismaster`). */
  name: string
  spec: CommandSpec
  /** OP_MSG flag bits of the request (0 for OP_QUERY). */
  flags: number
}

export type CurrentOpType = 'command' | 'query' | 'insert' | 'update' | 'remove' | 'getmore'

export interface CommandSpec {
  /** Canonical name (metrics.commands key). */
  name: string
  aliases?: string[]
  /** May run on an unauthenticated connection. */
  noAuth?: boolean
  /** Privilege needed; null/undefined = any authenticated user. */
  authz?: (ctx: CommandContext) => Requirement | null | undefined
  /** Writes data: fails with NotWritablePrimary on secondaries, queues on the collection lock. */
  write?: boolean
  /**
   * Whether a secondary runs it (`Command::secondaryAllowed`, src/mongo/db/commands.h and each
   * command's override): 'optIn' reads need a read preference other than primary. Absent: 'never'
   * for a write, else 'always' (hello, serverStatus, getMore, … as mongod declares them).
   */
  secondaryAllowed?: AllowedOnSecondary
  /** Lock accounting: 'read' (IS), 'write' (collection queue), 'global', 'dbExclusive', or none. */
  lock?: 'read' | 'write' | 'global' | 'dbExclusive'
  /** opcounters bucket; 'self' = the handler counts (insert/update/delete per statement). */
  opCounter?: OpCounter | 'self'
  /** hello family: never delayed by injected latency; may stream (exhaust). */
  monitoring?: boolean
  currentOpType?: CurrentOpType
  /** The command exists on this process's version (e.g. `getnonce` only on 4.4); absent = every version. */
  availableOn?: (proc: SimProcess) => boolean
  /** Fields to leave out of currentOp's `command` (credentials). */
  sensitiveFields?: string[]
  handler: (ctx: CommandContext) => Document | Promise<Document>
}

export class CommandRegistry {
  private readonly byName = new Map<string, CommandSpec>()

  register(spec: CommandSpec): this {
    for (const n of [spec.name, ...(spec.aliases ?? [])]) {
      if (this.byName.has(n)) throw new Error(`command '${n}' registered twice`)
      this.byName.set(n, spec)
    }
    return this
  }

  registerAll(specs: readonly CommandSpec[]): this {
    for (const s of specs) this.register(s)
    return this
  }

  /** Replace or add (a topology overriding a mongod command, e.g. mongos `insert`). */
  override(spec: CommandSpec): this {
    for (const n of [spec.name, ...(spec.aliases ?? [])]) this.byName.set(n, spec)
    return this
  }

  lookup(name: string): CommandSpec | undefined {
    return this.byName.get(name)
  }

  /** Drops a command and its aliases (a router lacks mongod-only commands: CommandNotFound). */
  remove(name: string): this {
    const spec = this.byName.get(name)
    if (spec) for (const n of [spec.name, ...(spec.aliases ?? [])]) this.byName.delete(n)
    return this
  }

  names(): string[] {
    return [...this.byName.keys()]
  }

  /** A copy to specialise per role without touching the shared table. */
  clone(): CommandRegistry {
    const c = new CommandRegistry()
    for (const [n, s] of this.byName) c.byName.set(n, s)
    return c
  }
}

/** `<db>.<collection named by the command's first field>` */
export function commandNamespace(ctx: CommandContext): string {
  const v = ctx.cmd[ctx.name]
  if (typeof v === 'string') return `${ctx.db}.${v}`
  if (typeof ctx.cmd.collection === 'string') return `${ctx.db}.${ctx.cmd.collection}` // getMore
  if (ctx.name === 'aggregate') return `${ctx.db}.$cmd.aggregate`
  return `${ctx.db}.$cmd`
}

/** The spec's `secondaryAllowed`, defaulted as its doc says. */
export function allowedOnSecondary(spec: CommandSpec): AllowedOnSecondary {
  return spec.secondaryAllowed ?? (spec.write ? 'never' : 'always')
}
