/** How wide text on stdout may be. */
// The type only: help's fast path (fast-help.ts) asks this for the width without loading the text fitter.
import type {Layout} from '../reporters/fit.js'

/**
 * The terminal's columns when stdout is one; else COLUMNS when set (`COLUMNS=80 pooltool … | less`,
 * and how tests ask for a width); else no limit: a file or a pipe gets every line whole.
 */
export function stdoutLayout(stream: {isTTY?: boolean; columns?: number; rows?: number} = process.stdout, env: NodeJS.ProcessEnv = process.env): Layout {
  if (stream.isTTY && stream.columns) return {width: stream.columns, ...(stream.rows ? {height: stream.rows} : {})}
  const columns = Number(env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? {width: columns} : {width: Number.POSITIVE_INFINITY}
}
