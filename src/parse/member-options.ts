/**
 * `--member-options` of `pooltool sim`: replica-set member settings, OPTION@MEMBER separated by
 * commas, MEMBER the 1-based position: `hidden@2`, `arbiter@3`, `priority=0.5@2`. Which combinations a
 * replica set accepts (a hidden member has priority 0 …) is checked when the cluster starts.
 */
import {usageError} from '../errors.js'
import type {SimMemberOption} from '../sim/index.js'

const HINT = 'write OPTION@MEMBER[,…] with MEMBER from 1, e.g. hidden@2,arbiter@3 or priority=2@1,priority=0@3'

export function parseMemberOptions(spec: string): SimMemberOption[] {
  const byMember = new Map<number, SimMemberOption>()
  for (const part of spec.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const match = /^(hidden|arbiter|priority=([0-9]+(?:\.[0-9]+)?))@([0-9]+)$/.exec(part)
    if (!match) throw usageError(`--member-options '${spec}': '${part}' does not parse`, HINT)
    const [, option, priority, position] = match as unknown as [string, string, string | undefined, string]
    const member = Number(position)
    if (member < 1) throw usageError(`--member-options '${spec}': members are numbered from 1`, HINT)
    const entry = byMember.get(member) ?? {member}
    if (option === 'hidden') entry.hidden = true
    else if (option === 'arbiter') entry.arbiter = true
    else entry.priority = Number(priority)
    byMember.set(member, entry)
  }
  return [...byMember.values()]
}
