/**
 * MongoDB's lock modes and their compatibility (pure).
 *
 * `$currentOp.locks`, `lockStats` and `serverStatus.locks` name modes by letter; `lockInfo` by name
 * (manual, lockInfo "Lock Information": S, X, IS, IX; serverStatus.locks and $currentOp abbreviate them r = IS, w = IX, R = S, W = X).
 * Compatibility is the manual's lock FAQ table (faq/concurrency, "What type of locking does MongoDB
 * use?"): IS is compatible with IS, IX, S; IX with IS, IX; S with IS, S; X with nothing.
 */
import type {LockModeLetter, LockModeName} from './types.js'

export const MODE_NAME_OF: Readonly<Record<LockModeLetter, LockModeName>> = {r: 'IS', w: 'IX', R: 'S', W: 'X'}
export const MODE_LETTER_OF: Readonly<Record<LockModeName, LockModeLetter>> = {IS: 'r', IX: 'w', S: 'R', X: 'W'}

const COMPATIBLE: Readonly<Record<LockModeName, ReadonlySet<LockModeName>>> = {
  IS: new Set<LockModeName>(['IS', 'IX', 'S']),
  IX: new Set<LockModeName>(['IS', 'IX']),
  S: new Set<LockModeName>(['IS', 'S']),
  X: new Set<LockModeName>(),
}

export function isModeLetter(value: unknown): value is LockModeLetter {
  return value === 'r' || value === 'w' || value === 'R' || value === 'W'
}

export function isModeName(value: unknown): value is LockModeName {
  return value === 'IS' || value === 'IX' || value === 'S' || value === 'X'
}

/** A letter or a name as the mode's name; null for anything else (a 2.x shape, a future mode). */
export function modeName(mode: unknown): LockModeName | null {
  if (isModeLetter(mode)) return MODE_NAME_OF[mode]
  if (isModeName(mode)) return mode
  return null
}

/** Whether two requests on the same resource can be granted together (the relation is symmetric). */
export function compatible(a: LockModeName, b: LockModeName): boolean {
  return COMPATIBLE[a].has(b)
}

/** Whether `a` and `b` conflict; unknown modes never conflict (no edge is invented from a mode we cannot read). */
export function conflicts(a: unknown, b: unknown): boolean {
  const x = modeName(a)
  const y = modeName(b)
  return x !== null && y !== null && !compatible(x, y)
}
