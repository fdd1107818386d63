/**
 * The flags a user gave, as they gave them, minus some: for a command that hands its own flags on
 * to another run of pooltool (bench --emit k8s-job passes the load's flags to every pod).
 */
export interface FlagKinds {
  /** Flags that take no value (`--keep`). Every other `--name` takes the next word unless written `--name=value`. */
  booleans: ReadonlySet<string>
}

/** `argv` without the flags named in `drop` (and their values). Everything else keeps its order and spelling. */
export function passThroughArgs(argv: readonly string[], kinds: FlagKinds, drop: ReadonlySet<string>): string[] {
  const kept: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (!token.startsWith('--')) {
      kept.push(token)
      continue
    }
    const [rawName, inlineValue] = token.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
    const name = rawName.startsWith('no-') && kinds.booleans.has(rawName.slice(3)) ? rawName.slice(3) : rawName
    const takesNext = inlineValue === undefined && !kinds.booleans.has(name) && i + 1 < argv.length
    const words = takesNext ? [token, argv[i + 1]!] : [token]
    if (takesNext) i += 1
    if (!drop.has(name)) kept.push(...words)
  }
  return kept
}
