/** Users per database with SCRAM credentials derived with real PBKDF2 (shared by a topology's members). */
import {UUID, type Binary} from 'bson'
import {CommandError} from '../errors.js'
import {deriveCredentialAsync, type ScramCredential, type ScramMechanism} from '../../wire/index.js'
import type {RoleRef} from './roles.js'

export interface UserRecord {
  user: string
  db: string
  userId: Binary
  roles: RoleRef[]
  credentials: Partial<Record<ScramMechanism, ScramCredential>>
  /** The keyFile's `__system@local`: not a stored user (no usersInfo, no admin.system.users entry), no roles reported. */
  internal?: true
}

/**
 * The user every member and router authenticates its own connections as when a keyFile is set: `__system` on `local`,
 * built from the key at start (`createSystemUserHandle`, src/mongo/db/auth/authorization_manager_impl.cpp: universal
 * privileges, no roles; credentials from the key for both SCRAM mechanisms, src/mongo/db/auth/security_key.cpp).
 */
export const INTERNAL_USER = {user: '__system', db: 'local'} as const

export interface IterationCounts {
  scramIterationCount: number
  scramSHA256IterationCount: number
}

export class UserStore {
  private readonly users = new Map<string, UserRecord>()
  private internalUser: UserRecord | undefined

  static key(db: string, user: string): string {
    return `${db}.${user}`
  }

  /** A user who can authenticate and be authorized: a stored one, or the internal `__system@local` once the key is set. */
  get(db: string, user: string): UserRecord | undefined {
    if (this.internalUser && db === INTERNAL_USER.db && user === INTERNAL_USER.user) return this.internalUser
    return this.users.get(UserStore.key(db, user))
  }

  /** Derives `__system@local`'s credentials from the cluster's key (only the cluster's own processes know it). */
  async setInternalKey(key: string, counts: IterationCounts): Promise<void> {
    const credentials = await UserStore.credentials(INTERNAL_USER.user, key, ['SCRAM-SHA-1', 'SCRAM-SHA-256'], counts)
    // The `__system` built-in role stands for the universal privileges the server grants the internal user directly.
    this.internalUser = {...INTERNAL_USER, userId: new UUID().toBinary(), roles: [{role: '__system', db: 'admin'}], credentials, internal: true}
  }

  /** The stored users (what usersInfo and admin.system.users list): never `__system@local`. */
  all(): UserRecord[] {
    return [...this.users.values()]
  }

  get size(): number {
    return this.users.size
  }

  static async credentials(
    user: string,
    password: string,
    mechanisms: readonly ScramMechanism[],
    counts: IterationCounts,
  ): Promise<UserRecord['credentials']> {
    const out: UserRecord['credentials'] = {}
    for (const mech of mechanisms) {
      const iterations = mech === 'SCRAM-SHA-1' ? counts.scramIterationCount : counts.scramSHA256IterationCount
      out[mech] = await deriveCredentialAsync(mech, user, password, iterations)
    }
    return out
  }

  async create(
    db: string,
    user: string,
    password: string,
    roles: RoleRef[],
    mechanisms: readonly ScramMechanism[],
    counts: IterationCounts,
  ): Promise<UserRecord> {
    if (this.get(db, user)) throw new CommandError(51003, `User "${user}@${db}" already exists`)
    const credentials = await UserStore.credentials(user, password, mechanisms, counts)
    // Re-check: another createUser may have raced us while PBKDF2 ran.
    if (this.get(db, user)) throw new CommandError(51003, `User "${user}@${db}" already exists`)
    const record: UserRecord = {user, db, userId: new UUID().toBinary(), roles, credentials}
    this.users.set(UserStore.key(db, user), record)
    return record
  }

  require(db: string, user: string): UserRecord {
    const rec = this.users.get(UserStore.key(db, user))
    if (!rec) throw new CommandError(11, `User '${user}@${db}' not found`)
    return rec
  }

  drop(db: string, user: string): void {
    this.require(db, user)
    this.users.delete(UserStore.key(db, user))
  }

  dropAll(db: string): number {
    let n = 0
    for (const [k, u] of this.users) {
      if (u.db === db) {
        this.users.delete(k)
        n++
      }
    }
    return n
  }
}
