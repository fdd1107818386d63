/**
 * --concurrency as bench reads it: one number or a comma list (the matrix), each 1 to 100,000.
 * A module of its own (pure, nothing but the list parser) so that the usage errors of a bench
 * command line can be answered before oclif loads (src/cli/fast-usage.ts) by the check bench runs.
 */
import {parseIntegerList} from '../parse/lists.js'

export const MAX_CONCURRENCY = 100_000

/** "1,8,64" → [1, 8, 64]; a usage error for anything else. */
export function parseConcurrencies(text: string): number[] {
  return parseIntegerList(text, 'concurrency', 1, MAX_CONCURRENCY)
}
