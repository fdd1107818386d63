/**
 * Whether pooltool may color what it prints: not when NO_COLOR is set to anything but "" (no-color.org),
 * which `--no-color` sets for the whole process, so every part (the spinner, libraries) sees one answer.
 */
export function colorAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NO_COLOR === undefined || env.NO_COLOR === ''
}
