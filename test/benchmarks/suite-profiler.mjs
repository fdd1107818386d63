// Profiles every Node process of a test run, to see where the suite's CPU goes (a tool, not a test):
//
//   SUITE_PROFILE_DIR=/tmp/suite-prof NODE_OPTIONS="--import=$PWD/test/benchmarks/suite-profiler.mjs" node test/run-tiers.mjs cli
//   node test/benchmarks/summarize-suite-profile.mjs /tmp/suite-prof
//
// Each process's main thread is sampled every millisecond (V8's profiler through node:inspector: `--cpu-prof` is not
// allowed in NODE_OPTIONS) and writes <pid>-<its first arguments>.cpuprofile at its exit. A process killed outright
// (SIGKILL) writes nothing; worker threads (the ESM loader's hooks, bench --workers) are not sampled.
import {writeFileSync} from 'node:fs'
import {Session} from 'node:inspector'
import path from 'node:path'
import {isMainThread} from 'node:worker_threads'

const dir = process.env.SUITE_PROFILE_DIR
if (isMainThread && dir) {
  const session = new Session()
  session.connect()
  session.post('Profiler.enable')
  session.post('Profiler.setSamplingInterval', {interval: 1000})
  session.post('Profiler.start')
  process.on('exit', () => {
    // The in-process inspector answers synchronously, so the profile is written before the process ends.
    session.post('Profiler.stop', (error, result) => {
      if (error) return
      const name = `${process.pid}-${process.argv.slice(1, 4).join(' ').replace(/[^a-zA-Z0-9.-]+/g, '_').slice(-80)}.cpuprofile`
      try {
        writeFileSync(path.join(dir, name), JSON.stringify(result.profile))
      } catch {
        // A full disk or a removed directory must not change how the process ends.
      }
    })
  })
}
