/**
 * Built-in roles and the privilege checks commands ask for. A deliberately small model:
 * each command names one requirement (read/write/dbAdmin/userAdmin on a database, or
 * a cluster-wide monitor/admin action) and a role either grants it or not.
 */
import {CommandError} from '../errors.js'

export interface RoleRef {
  role: string
  db: string
}

export type Requirement =
  | {kind: 'read' | 'write' | 'dbAdmin' | 'userAdmin'; db: string}
  | {kind: 'clusterMonitor' | 'clusterAdmin'}

interface RoleDef {
  /** roles granted on the role's own db ('AnyDatabase' roles live on admin and grant everywhere) */
  anyDatabase: boolean
  grants: Set<Requirement['kind']>
}

const EVERY_REQUIREMENT: Array<Requirement['kind']> = ['read', 'write', 'dbAdmin', 'userAdmin', 'clusterMonitor', 'clusterAdmin']

const ROLES: Record<string, RoleDef> = {
  read: {anyDatabase: false, grants: new Set(['read'])},
  readWrite: {anyDatabase: false, grants: new Set(['read', 'write'])},
  dbAdmin: {anyDatabase: false, grants: new Set(['dbAdmin'])},
  userAdmin: {anyDatabase: false, grants: new Set(['userAdmin'])},
  dbOwner: {anyDatabase: false, grants: new Set(['read', 'write', 'dbAdmin', 'userAdmin'])},
  readAnyDatabase: {anyDatabase: true, grants: new Set(['read'])},
  readWriteAnyDatabase: {anyDatabase: true, grants: new Set(['read', 'write'])},
  dbAdminAnyDatabase: {anyDatabase: true, grants: new Set(['dbAdmin'])},
  userAdminAnyDatabase: {anyDatabase: true, grants: new Set(['userAdmin'])},
  clusterMonitor: {anyDatabase: true, grants: new Set(['clusterMonitor'])},
  clusterManager: {anyDatabase: true, grants: new Set(['clusterMonitor'])},
  clusterAdmin: {anyDatabase: true, grants: new Set(['clusterMonitor', 'clusterAdmin'])},
  root: {anyDatabase: true, grants: new Set(EVERY_REQUIREMENT)},
  // Any action on any resource (the built-in role of that name); what the keyFile's __system@local may do.
  __system: {anyDatabase: true, grants: new Set(EVERY_REQUIREMENT)},
}

/** Roles that only exist on admin. */
const ADMIN_ONLY = new Set(Object.entries(ROLES).filter(([, d]) => d.anyDatabase).map(([n]) => n))

export function isBuiltinRole(ref: RoleRef): boolean {
  const def = ROLES[ref.role]
  if (!def) return false
  return !ADMIN_ONLY.has(ref.role) || ref.db === 'admin'
}

/** Normalises createUser/updateUser `roles` ( "name" or {role, db} ) and checks they exist. */
export function parseRoles(roles: unknown, defaultDb: string): RoleRef[] {
  if (!Array.isArray(roles)) throw new CommandError(2, '"roles" field must be an array')
  return roles.map((r) => {
    const ref: RoleRef =
      typeof r === 'string'
        ? {role: r, db: defaultDb}
        : typeof r === 'object' && r !== null && typeof r.role === 'string'
          ? {role: r.role, db: typeof r.db === 'string' ? r.db : defaultDb}
          : (() => {
              throw new CommandError(2, 'role names must be strings or {role, db} documents')
            })()
    if (!isBuiltinRole(ref)) throw new CommandError(31, `Could not find role: ${ref.role}@${ref.db}`)
    return ref
  })
}

export function grants(roles: readonly RoleRef[], req: Requirement): boolean {
  for (const ref of roles) {
    const def = ROLES[ref.role]
    if (!def || !def.grants.has(req.kind)) continue
    if (req.kind === 'clusterMonitor' || req.kind === 'clusterAdmin') return true
    if (def.anyDatabase) {
      // AnyDatabase roles do not cover local/config writes on mongod; keep it simple.
      return true
    }
    if ('db' in req && ref.db === req.db) return true
  }
  return false
}

/** Databases a set of roles can see (listDatabases authorizedDatabases); null = all. */
export function visibleDatabases(roles: readonly RoleRef[]): Set<string> | null {
  const out = new Set<string>()
  for (const ref of roles) {
    const def = ROLES[ref.role]
    if (!def) continue
    if (def.anyDatabase && (def.grants.has('read') || def.grants.has('clusterMonitor'))) return null
    out.add(ref.db)
  }
  return out
}
