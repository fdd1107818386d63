/**
 * The member list of a replica set from `SimOptions.memberOptions`: priority (default 1), hidden and
 * arbiter members (both priority 0, as replica-set config validation requires), and which member is
 * primary: the first with the highest priority, as an election at rest ends.
 */
import type {MemberConfig} from '../process.js'
import type {SimMemberOption} from '../types.js'

/** Thrown for options no replica-set config would accept (cluster.ts turns it into a usage error). */
export class MemberOptionsError extends Error {
  override name = 'MemberOptionsError'
}

export function resolveMembers(count: number, options: readonly SimMemberOption[] = []): MemberConfig[] {
  const members: MemberConfig[] = Array.from({length: count}, () => ({state: 'secondary', priority: 1, hidden: false}))
  for (const o of options) {
    if (!Number.isInteger(o.member) || o.member < 1 || o.member > count) {
      throw new MemberOptionsError(`member ${o.member} does not exist: the set has members 1 to ${count}`)
    }
    const m = members[o.member - 1]!
    if (o.priority !== undefined) {
      if (!(o.priority >= 0 && o.priority <= 1000)) throw new MemberOptionsError(`member ${o.member}: priority must be between 0 and 1000 (got ${o.priority})`)
      m.priority = o.priority
    }
    if (o.arbiter) m.state = 'arbiter'
    if (o.hidden) m.hidden = true
  }
  for (const [i, m] of members.entries()) {
    if (m.state !== 'arbiter' && !m.hidden) continue
    // replSetInitiate refuses a hidden member or an arbiter with a priority above 0 (member_config.cpp).
    if (m.priority > 0 && options.some((o) => o.member === i + 1 && o.priority !== undefined)) {
      throw new MemberOptionsError(`member ${i + 1}: ${m.state === 'arbiter' ? 'an arbiter' : 'a hidden member'} must have priority 0`)
    }
    m.priority = 0
  }
  const top = Math.max(...members.map((m) => m.priority))
  if (!(top > 0)) throw new MemberOptionsError('no member can be primary: give one a priority above 0 (not hidden, not an arbiter)')
  members[members.findIndex((m) => m.priority === top)]!.state = 'primary'
  return members
}
