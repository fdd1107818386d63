/**
 * A replay served by the built CLI, as a user runs it: `pooltool sim --replay FILE --json`
 * as a child process, resolved once its started document is printed.
 *
 *   const replay = await startReplay('test/fixtures/snapshots/mongos44.json')
 *   await runCli(['conns', 'list', '--json', '--uri', replay.uri])
 *   await replay.stop()
 */
import {spawn} from 'node:child_process'
import path from 'node:path'

import {REPO_ROOT} from './cli.js'

export interface ReplayHandle {
  /** The URI to point pooltool at (the captured entry's listener(s), the captured options). */
  uri: string
  /** Captured host name → "127.0.0.1:port" of its listener. */
  hosts: Record<string, string>
  capturedAt: string
  /** What the replay said at its start (how its clocks run). */
  notes: string[]
  pid: number
  /** Ctrl-C, then wait for the exit; resolves with the exit code. */
  stop(): Promise<number | null>
}

export function startReplay(file: string, options: {startTimeoutMs?: number; args?: string[]} = {}): Promise<ReplayHandle> {
  const env: NodeJS.ProcessEnv = {...process.env, FORCE_COLOR: '0'}
  delete env.POOLTOOL_URI
  delete env.MONGODB_URI
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/run.js'), 'sim', '--replay', path.resolve(file), '--json', ...(options.args ?? [])], {cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return new Promise<ReplayHandle>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`sim --replay ${file} printed no started document in ${options.startTimeoutMs ?? 30_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.startTimeoutMs ?? 30_000)
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      let started: {uri: string; hosts: Record<string, string>; capturedAt: string; notes?: string[]}
      try {
        started = JSON.parse(stdout)
      } catch {
        return // not complete yet
      }
      clearTimeout(timer)
      resolve({
        uri: started.uri,
        hosts: started.hosts,
        capturedAt: started.capturedAt,
        notes: started.notes ?? [],
        pid: child.pid!,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT')
          return exited
        },
      })
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`sim --replay ${file} exited ${code} before printing its URI\nstdout: ${stdout}\nstderr: ${stderr}`))
    })
  })
}
