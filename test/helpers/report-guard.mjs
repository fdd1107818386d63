// Imported first by the grouped test processes run-tiers.mjs starts (one process runs several test files).
// `node --test` reads each file's results from its process's stdout, written there as serialized Buffers,
// at any moment: while one test runs, the reports of tests that ended before it are still being flushed.
// A test that replaces process.stdout.write to capture a command's text would swallow them, and the
// parent would never count those tests: in a process of its own a file can only lose its own reports,
// grouped it loses its neighbours' (2026-12-08: three unit tests went unreported, every count passing).
// So here whatever replaces process.stdout.write gets the text, and anything else still reaches the parent.

/** `replacement` for text; anything else (the runner's Buffers) goes to `runnerWrite` on `stream`. */
export function textOnly(replacement, runnerWrite, stream) {
  if (replacement === runnerWrite) return runnerWrite
  return function write(chunk, ...rest) {
    return typeof chunk === 'string' ? replacement.call(this, chunk, ...rest) : runnerWrite.call(stream, chunk, ...rest)
  }
}

/** From now on, a `stream.write = …` by a test captures text only. */
export function guardReports(stream) {
  const runnerWrite = stream.write
  let current = runnerWrite
  Object.defineProperty(stream, 'write', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (replacement) => {
      current = textOnly(replacement, runnerWrite, stream)
    },
  })
}

guardReports(process.stdout)
