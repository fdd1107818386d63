/** Users per database with SCRAM credentials derived with real PBKDF2 (shared by a topology's members). */
import {UUID, type Binary} from 'bson'
import {CommandError} from '../errors.js'
import {deriveCredentialAsync, type ScramCredential, type ScramMechanism} from '../../wire/scram.js'
import type {RoleRef} from './roles.js'

export interface UserRecord {
  user: string
  db: string
  userId: Binary
  roles: RoleRef[]
  credentials: Partial<Record<ScramMechanism, ScramCredential>>
}

export interface IterationCounts {
  scramIterationCount: number
  scramSHA256IterationCount: number
}

export class UserStore {
  private readonly users = new Map<string, UserRecord>()

  static key(db: string, user: string): string {
    return `${db}.${user}`
  }

  get(db: string, user: string): UserRecord | undefined {
    return this.users.get(UserStore.key(db, user))
  }

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
    const rec = this.get(db, user)
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
