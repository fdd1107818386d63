/**
 * The last line of defence for credentials: installed by bin/run.js before
 * anything else loads, it passes every write to stdout and stderr through the
 * redactor. pooltool's own output is redacted where it is built; this guard
 * catches what others print from the same process with the URI in it:
 * oclif's `DEBUG=*` output (argv, flags), Node's `NODE_DEBUG` (read at start-up,
 * so it cannot be turned off from here), the driver's logger, a stray
 * console.log in a dependency.
 *
 * The secrets it knows are the ones the invocation carries: `--uri` (also in
 * `--uri=…` form) and the POOLTOOL_URI / MONGODB_URI variables.
 */
import {redactUri, secretScrubber, secretsOfUri} from '../redact.js'

type Write = typeof process.stdout.write

/** The connection strings in the command line and the environment, wherever pooltool may read one. */
export function urisOfInvocation(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const uris: string[] = []
  for (const [index, arg] of argv.entries()) {
    if (arg === '--uri' && argv[index + 1] !== undefined) uris.push(argv[index + 1]!)
    else if (arg.startsWith('--uri=')) uris.push(arg.slice('--uri='.length))
  }
  for (const name of ['POOLTOOL_URI', 'MONGODB_URI']) if (env[name]) uris.push(env[name]!)
  // Any other argument shaped like a URI (a mistyped flag, a positional) is treated as one too.
  for (const arg of argv) if (/^mongodb(\+srv)?:\/\//i.test(arg) && !uris.includes(arg)) uris.push(arg)
  return uris.map((uri) => uri.trim()).filter((uri) => uri.length > 0)
}

/** A function that removes every known secret (and every URI's credentials) from a piece of output. */
export function makeScrubber(uris: readonly string[]): (text: string) => string {
  // Worked out once: the scrubber runs on every write.
  // Only what the invocation carries: `pooltool sim --auth` prints its own test credentials on purpose.
  const scrubKnownSecrets = secretScrubber(uris.flatMap((uri) => secretsOfUri(uri)))
  const redactions = uris.flatMap((uri): Array<[string, string]> => {
    const redacted = redactUri(uri)
    return redacted === uri ? [] : [[uri, redacted]]
  })
  return (text) => {
    let out = text
    for (const [uri, redacted] of redactions) if (out.includes(uri)) out = out.split(uri).join(redacted)
    return scrubKnownSecrets(out)
  }
}

function guardStream(stream: NodeJS.WriteStream, scrub: (text: string) => string): void {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean
  const guarded = (chunk: unknown, ...rest: unknown[]): boolean => {
    if (typeof chunk === 'string') return write(scrub(chunk), ...rest)
    if (chunk instanceof Uint8Array) {
      const text = Buffer.from(chunk).toString('utf8')
      const clean = scrub(text)
      // Strings keep the caller's encoding argument meaningful only for strings: pass bytes back as bytes.
      return write(clean === text ? chunk : Buffer.from(clean, 'utf8'), ...rest)
    }
    return write(chunk, ...rest)
  }
  stream.write = guarded as Write
}

/**
 * Scrub the invocation's secrets from everything written to stdout and stderr.
 * Returns the scrubber, so other sinks (the --debug stream) can use the same one.
 */
export function installSecretGuard(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): (text: string) => string {
  const scrub = makeScrubber(urisOfInvocation(argv, env))
  guardStream(process.stdout, scrub)
  guardStream(process.stderr, scrub)
  return scrub
}
