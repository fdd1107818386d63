/**
 * One deadline for a whole node read (a `locks watch` poll): on a sharded cluster, finding a set's primary
 * (hello on its members) and reading it share the poll's --timeout-ms, the read getting what the search left,
 * so a poll ends within the one bound it reports (`pollTimeoutMS`), not one bound per phase back to back.
 *
 * Without sockets: fake hosts answer or stall (a stalled read ends only when its signal aborts, as the
 * driver's does), and the deadline is the test's own, aborted when the test says. The target's own
 * --timeout-ms is 1 ms: any read bounded by a timeout of its own instead of the shared deadline would be cut
 * by it at once, and its message would say "1 ms". No timing is measured.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {NodeReaders, nodeStatusOf, readNodes, type ReadDeadline, TIMED_OUT} from '../../src/locks/nodes.js'
import type {Document} from '../../src/mongo/driver.js'
import type {OpenReader} from '../../src/probes/host-connection.js'
import {type ChannelReadOptions, type CommandChannel, ServerReader} from '../../src/probes/reader.js'
import type {ClusterHost, ClusterTopology} from '../../src/probes/topology.js'
import type {Target} from '../../src/target.js'

const NOW = new Date('2026-11-28T08:00:00Z')

/** How one fake host behaves: its hello reply (or a stall), and whether the node reads stall. */
interface FakeHost {
  hello: Document | 'stall'
  nodeReads: 'answer' | 'stall'
  /** Called as the hello is answered (a search that spends the deadline). */
  beforeHelloAnswer?: () => void
}

/** One read a fake host was asked: its name and the signal it got. */
interface Asked {
  host: string
  name: string
  signal: AbortSignal | undefined
}

const primaryHello = (setName: string): Document => ({isWritablePrimary: true, setName, localTime: NOW, ok: 1})
const secondaryHello = (setName: string, primary: string): Document => ({isWritablePrimary: false, secondary: true, setName, primary, localTime: NOW, ok: 1})

function stall(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (!signal) return
    if (signal.aborted) reject(signal.reason)
    // The driver ends a read whose signal aborts with that signal's reason.
    signal.addEventListener('abort', () => reject(signal.reason), {once: true})
  })
}

/** A target whose readers are the fake hosts, and what each host was asked (in order). */
function fakeTarget(hosts: Record<string, FakeHost>): {target: Target; asked: Asked[]; nodeReadAsked: Promise<string>} {
  const asked: Asked[] = []
  let nodeReadStalled: (host: string) => void = () => undefined
  const nodeReadAsked = new Promise<string>((resolve) => (nodeReadStalled = resolve))
  const channel = (address: string): CommandChannel => {
    const host = hosts[address]!
    const nodeRead = async (name: string, options: ChannelReadOptions | undefined, reply: () => Document | Document[]) => {
      asked.push({host: address, name, signal: options?.signal})
      if (host.nodeReads === 'stall') {
        nodeReadStalled(address)
        return stall(options?.signal)
      }
      return reply()
    }
    return {
      host: address,
      async command(_db, command, options) {
        if (command.hello) {
          asked.push({host: address, name: 'hello', signal: options?.signal})
          if (host.hello === 'stall') return stall(options?.signal)
          host.beforeHelloAnswer?.()
          return host.hello
        }
        if (command.serverStatus) return nodeRead('serverStatus', options, () => ({version: '7.0.14', localTime: NOW, locks: {}, globalLock: {currentQueue: {total: 0, readers: 0, writers: 0}}, ok: 1}))
        if (command.lockInfo) return nodeRead('lockInfo', options, () => ({lockInfo: [], ok: 1}))
        throw new Error(`unexpected command ${JSON.stringify(command)}`)
      },
      async aggregate(_db, _pipeline, options) {
        return nodeRead('$currentOp', options, () => []) as Promise<Document[]>
      },
    }
  }
  const target = {
    redactedUri: 'mongodb://fake/',
    secrets: [],
    // Any bound of a read's own: cut at once, named "1 ms". The shared deadline is the only one the reads may have.
    connection: {appName: 'pooltool', timeoutMs: 1},
    openReader(address?: string): OpenReader {
      return {reader: new ServerReader(channel(address!)), answered: () => true, close: async () => undefined}
    },
  } as unknown as Target
  return {target, asked, nodeReadAsked}
}

/** A deadline the test ends: 800 ms is only what its messages say. */
function testDeadline(): {deadline: ReadDeadline; expire: () => void} {
  const controller = new AbortController()
  return {deadline: {signal: controller.signal, timeoutMs: 800}, expire: () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))}
}

const member = (host: string, role: 'shard' | 'config', setName: string, shard?: string): ClusterHost => ({host, role, setName, ...(shard === undefined ? {} : {shard})})

function sharded(hosts: ClusterHost[]): ClusterTopology {
  return {kind: 'sharded', hosts, sources: [], warnings: [], staleRouters: []}
}

// IP addresses: the readers look no name up.
const S1 = '127.0.0.1:27018'
const S2 = '127.0.0.2:27018'
const C1 = '127.0.0.3:27019'

describe('locks: one deadline for a whole node read', () => {
  it('finding a shard\'s primary and reading it share the deadline: the stalled read is cut by it, the node unknown, the reason naming the bound', async () => {
    const {target, asked, nodeReadAsked} = fakeTarget({
      [S1]: {hello: primaryHello('sh0'), nodeReads: 'stall'},
      [S2]: {hello: secondaryHello('sh0', S1), nodeReads: 'answer'},
      [C1]: {hello: primaryHello('cfg'), nodeReads: 'answer'},
    })
    const readers = new NodeReaders(target, 'locks')
    const {deadline, expire} = testDeadline()
    try {
      const topology = sharded([member(S1, 'shard', 'sh0', 'sh0'), member(S2, 'shard', 'sh0', 'sh0'), member(C1, 'config', 'cfg')])
      const reading = readNodes(target, readers, topology, {deadline})
      assert.equal(await nodeReadAsked, S1, 'the shard primary\'s read stalls')
      expire()
      // Every read of the poll, the search's hellos and the nodes' reads alike, is under the one deadline.
      const unended = asked.filter((a) => a.signal?.aborted !== true)
      assert.deepEqual(unended.map((a) => `${a.host} ${a.name}`), [], 'no read of the poll outlives its deadline')
      const {nodes, samples} = await reading
      const shard = nodes.find((n) => n.host === S1)!
      assert.equal(shard.role, 'shard primary')
      assert.equal(shard.view, null, 'unknown, never "no locks"')
      assert.equal(shard.readAt, null)
      assert.equal(shard.error?.code, 'UNREACHABLE')
      assert.equal(shard.error?.message, `${S1} did not answer within 800 ms (--timeout-ms, one bound for finding its set's primary and reading it)`)
      assert.match(shard.error!.message, TIMED_OUT, 'the watch counts it as a timeout')
      assert.equal(nodeStatusOf(shard).waiting, null)
      const config = nodes.find((n) => n.host === C1)!
      assert.equal(config.role, 'config primary')
      assert.notEqual(config.view, null, 'the config primary answered in time')
      assert.deepEqual([...samples.keys()], [C1])
    } finally {
      await readers.close()
    }
  })

  it('a search that spends the whole deadline leaves the primary unasked: unknown for the read, the reason naming the bound', async () => {
    const {deadline, expire} = testDeadline()
    // The primary answers hello just as the deadline runs out: nothing is left for its read.
    const {target, asked} = fakeTarget({
      [S1]: {hello: primaryHello('sh0'), nodeReads: 'answer', beforeHelloAnswer: expire},
      [C1]: {hello: 'stall', nodeReads: 'answer'},
    })
    const readers = new NodeReaders(target, 'locks')
    try {
      const {nodes} = await readNodes(target, readers, sharded([member(S1, 'shard', 'sh0', 'sh0'), member(C1, 'config', 'cfg')]), {deadline})
      const shard = nodes.find((n) => n.role === 'shard primary')!
      assert.equal(shard.host, S1)
      assert.equal(shard.view, null)
      assert.equal(shard.error?.message, `${S1} not read: no time left within 800 ms (--timeout-ms, one bound for finding its set's primary and reading it)`)
      assert.match(shard.error!.message, TIMED_OUT)
      assert.deepEqual(asked.filter((a) => a.host === S1).map((a) => a.name), ['hello'], 'no read is sent once the deadline has passed')
      // The config server's only member stalled: no primary found, cut by the same deadline.
      const config = nodes.find((n) => n.role === 'config primary')!
      assert.equal(config.view, null)
      assert.equal(config.error?.code, 'UNREACHABLE')
      assert.match(config.error!.message, new RegExp(`no primary of the config server found among ${C1.replaceAll('.', '\\.')}: .*did not answer within 800 ms \\(--timeout-ms\\)`))
    } finally {
      await readers.close()
    }
  })

  it('a primary the others name but whose own hello stalls: its hello\'s failure, by the one deadline, is why it is unknown (no second read)', async () => {
    const {target, asked} = fakeTarget({
      [C1]: {hello: 'stall', nodeReads: 'answer'},
      [S2]: {hello: secondaryHello('cfg', C1), nodeReads: 'answer'},
    })
    const readers = new NodeReaders(target, 'locks')
    const {deadline, expire} = testDeadline()
    try {
      const reading = readNodes(target, readers, sharded([member(C1, 'config', 'cfg'), member(S2, 'config', 'cfg')]), {deadline})
      // Both hellos asked; the primary's stalls until the deadline.
      while (asked.filter((a) => a.name === 'hello').length < 2) await new Promise((resolve) => setImmediate(resolve))
      expire()
      const {nodes} = await reading
      assert.equal(nodes.length, 1)
      const config = nodes[0]!
      assert.equal(config.host, C1)
      assert.equal(config.role, 'config primary')
      assert.equal(config.view, null)
      assert.equal(config.error?.code, 'UNREACHABLE')
      assert.equal(config.error?.message, `${C1} did not answer within 800 ms (--timeout-ms)`)
      assert.deepEqual(asked.filter((a) => a.host === C1).map((a) => a.name), ['hello'], 'not asked again after the deadline')
    } finally {
      await readers.close()
    }
  })

  it('a stalled secondary spends none of the primary\'s time: the primary is read once it says it is primary', async () => {
    const {target, asked} = fakeTarget({
      [S1]: {hello: primaryHello('sh0'), nodeReads: 'answer'},
      [S2]: {hello: 'stall', nodeReads: 'answer'},
    })
    const readers = new NodeReaders(target, 'locks')
    const {deadline, expire} = testDeadline()
    try {
      const {nodes} = await readNodes(target, readers, sharded([member(S2, 'shard', 'sh0', 'sh0'), member(S1, 'shard', 'sh0', 'sh0')]), {deadline})
      assert.equal(nodes.length, 1)
      assert.equal(nodes[0]!.host, S1)
      assert.notEqual(nodes[0]!.view, null, 'the primary was read')
      // Read while the secondary's hello still waited: not after it (its own bound would have cut it at once).
      const secondaryHello = asked.find((a) => a.host === S2 && a.name === 'hello')!
      assert.equal(secondaryHello.signal?.aborted, false, 'the secondary\'s hello is still under way, within the deadline')
      assert.equal(deadline.signal.aborted, false)
    } finally {
      // The deadline ends the stalled hello, as it would at the end of the poll.
      expire()
      await readers.close()
    }
  })

  it('a replica set: each member read within the deadline, a stalled one cut by it and named so', async () => {
    const {target, nodeReadAsked} = fakeTarget({
      [S1]: {hello: primaryHello('rs0'), nodeReads: 'answer'},
      [S2]: {hello: secondaryHello('rs0', S1), nodeReads: 'stall'},
    })
    const readers = new NodeReaders(target, 'locks')
    const {deadline, expire} = testDeadline()
    try {
      const topology: ClusterTopology = {kind: 'replset', setName: 'rs0', hosts: [{host: S1, role: 'primary', setName: 'rs0'}, {host: S2, role: 'secondary', setName: 'rs0'}], sources: [], warnings: [], staleRouters: []}
      const reading = readNodes(target, readers, topology, {deadline})
      await nodeReadAsked
      expire()
      const {nodes} = await reading
      assert.notEqual(nodes.find((n) => n.host === S1)!.view, null)
      const stalled = nodes.find((n) => n.host === S2)!
      assert.equal(stalled.view, null)
      // No search on a replica set: the read had the whole bound.
      assert.equal(stalled.error?.message, `${S2} did not answer within 800 ms (--timeout-ms)`)
    } finally {
      await readers.close()
    }
  })
})
