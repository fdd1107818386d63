/** createUser / updateUser / dropUser / dropAllUsersFromDatabase / usersInfo. */
import type {Document} from 'bson'
import {parseRoles} from '../auth/roles.js'
import {UserStore, type UserRecord} from '../auth/users.js'
import {CommandError} from '../errors.js'
import {isPlainObject} from '../storage/values.js'
import {SCRAM_MECHANISMS, isScramMechanism, type ScramMechanism} from '../../wire/index.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {userAdminOn} from './util.js'

function userName(ctx: CommandContext): string {
  const name = ctx.cmd[ctx.name]
  if (typeof name !== 'string' || name.length === 0) throw new CommandError(2, 'User name must be a non-empty string')
  return name
}

function mechanisms(cmd: Document): ScramMechanism[] {
  if (cmd.mechanisms === undefined) return [...SCRAM_MECHANISMS]
  if (!Array.isArray(cmd.mechanisms) || cmd.mechanisms.length === 0) throw new CommandError(2, 'mechanisms field must not be empty')
  return cmd.mechanisms.map((m: unknown) => {
    if (!isScramMechanism(m)) throw new CommandError(2, `Unknown auth mechanism '${String(m)}'`)
    return m
  })
}

function password(cmd: Document): string {
  if (typeof cmd.pwd !== 'string' || cmd.pwd.length === 0) {
    throw new CommandError(2, 'Must provide a \'pwd\' field for all user documents, except those with \'$external\' as the user\'s source db')
  }
  return cmd.pwd
}

async function createUser(ctx: CommandContext): Promise<Document> {
  const name = userName(ctx)
  const roles = parseRoles(ctx.cmd.roles ?? [], ctx.db)
  const pwd = password(ctx.cmd)
  await ctx.proc.users.create(ctx.db, name, pwd, roles, mechanisms(ctx.cmd), {
    scramIterationCount: ctx.proc.scramIterationCount,
    scramSHA256IterationCount: ctx.proc.scramSHA256IterationCount,
  })
  return {ok: 1}
}

async function updateUser(ctx: CommandContext): Promise<Document> {
  const name = userName(ctx)
  const record = ctx.proc.users.require(ctx.db, name)
  if (ctx.cmd.roles !== undefined) record.roles = parseRoles(ctx.cmd.roles, ctx.db)
  if (ctx.cmd.pwd !== undefined) {
    const mechs = ctx.cmd.mechanisms !== undefined ? mechanisms(ctx.cmd) : (Object.keys(record.credentials) as ScramMechanism[])
    record.credentials = await UserStore.credentials(name, password(ctx.cmd), mechs, {
      scramIterationCount: ctx.proc.scramIterationCount,
      scramSHA256IterationCount: ctx.proc.scramSHA256IterationCount,
    })
  }
  return {ok: 1}
}

function dropUser(ctx: CommandContext): Document {
  ctx.proc.users.drop(ctx.db, userName(ctx))
  return {ok: 1}
}

function dropAllUsers(ctx: CommandContext): Document {
  return {n: ctx.proc.users.dropAll(ctx.db), ok: 1}
}

function describe(u: UserRecord): Document {
  return {
    _id: `${u.db}.${u.user}`,
    userId: u.userId,
    user: u.user,
    db: u.db,
    roles: u.roles.map((r) => ({role: r.role, db: r.db})),
    mechanisms: Object.keys(u.credentials),
  }
}

function usersInfo(ctx: CommandContext): Document {
  const arg = ctx.cmd.usersInfo
  const all = ctx.proc.users.all()
  let selected: UserRecord[]
  const pick = (spec: unknown): UserRecord[] => {
    if (typeof spec === 'string') return all.filter((u) => u.db === ctx.db && u.user === spec)
    if (isPlainObject(spec) && typeof spec.user === 'string') {
      const db = typeof spec.db === 'string' ? spec.db : ctx.db
      return all.filter((u) => u.db === db && u.user === spec.user)
    }
    throw new CommandError(2, 'User name must be a string or a {user, db} document')
  }
  if (arg === 1 || arg === true) selected = all.filter((u) => u.db === ctx.db)
  else if (isPlainObject(arg) && arg.forAllDBs === true) selected = all
  else if (Array.isArray(arg)) selected = arg.flatMap(pick)
  else selected = pick(arg)
  return {users: selected.map(describe), ok: 1}
}

/** Viewing only yourself needs no privilege. */
function usersInfoAuthz(ctx: CommandContext) {
  const arg = ctx.cmd.usersInfo
  const self = ctx.conn.users
  const target = typeof arg === 'string' ? {user: arg, db: ctx.db} : isPlainObject(arg) && typeof arg.user === 'string' ? {user: arg.user, db: typeof arg.db === 'string' ? arg.db : ctx.db} : null
  if (target && self.some((u) => u.user === target.user && u.db === target.db)) return null
  return userAdminOn(ctx)
}

export const userCommands: CommandSpec[] = [
  {name: 'createUser', handler: createUser, authz: userAdminOn, write: true, sensitiveFields: ['pwd']},
  {name: 'updateUser', handler: updateUser, authz: userAdminOn, write: true, sensitiveFields: ['pwd']},
  {name: 'dropUser', handler: dropUser, authz: userAdminOn, write: true},
  {name: 'dropAllUsersFromDatabase', handler: dropAllUsers, authz: userAdminOn, write: true},
  {name: 'usersInfo', handler: usersInfo, authz: usersInfoAuthz, secondaryAllowed: 'optIn'},
]
