/**
 * The read layer over a driver client (src/probes/driver-channel.ts): a read cut by its deadline before the
 * host ever answered ends with the monitor's last failed check (a refused or closed connection), so the
 * commands say why the host could not be read instead of calling it stalled. Without sockets: a client
 * stand-in that emits the driver's monitoring events and whose reads end only when their signal aborts.
 */
import assert from 'node:assert/strict'
import {EventEmitter} from 'node:events'
import {describe, it} from 'node:test'

import type {MongoClient} from '../../src/mongo/driver.js'
import {driverChannel} from '../../src/probes/driver-channel.js'
import type {CommandChannel} from '../../src/probes/reader.js'

/** A client whose every command waits for its signal, and rejects with the signal's reason, as the driver does. */
function stalledClient(): EventEmitter & MongoClient {
  const client = new EventEmitter()
  const waitForAbort = (options: {signal?: AbortSignal}) =>
    new Promise((_, reject) => options.signal?.addEventListener('abort', () => reject(options.signal!.reason), {once: true}))
  Object.assign(client, {db: () => ({command: (_command: unknown, options: {signal?: AbortSignal}) => waitForAbort(options)})})
  return client as EventEmitter & MongoClient
}

const closedCheck = Object.assign(new Error('connection <monitor> to 127.0.0.1:27017 closed'), {name: 'MongoNetworkError'})

/** The channel is made with the client, before the monitor's first check (src/target.ts openReader). */
async function commandCutBy(channel: CommandChannel): Promise<unknown> {
  const deadline = new AbortController()
  const read = channel.command('admin', {hello: 1}, {signal: deadline.signal})
  deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))
  return read.then(
    () => assert.fail('the read should fail'),
    (error: unknown) => error,
  )
}

describe('a read its deadline cut, and what the monitor heard', () => {
  it('a host that never answered: the last failed check, not the bare abort', async () => {
    const client = stalledClient()
    const channel = driverChannel(client, '127.0.0.1:27017')
    client.emit('serverHeartbeatFailed', {failure: new Error('connect ECONNREFUSED 127.0.0.1:27017')})
    client.emit('serverHeartbeatFailed', {failure: closedCheck})
    assert.equal(await commandCutBy(channel), closedCheck)
  })

  it('a host that answered once and then stalled: the abort, so the command says it did not answer in time', async () => {
    const client = stalledClient()
    const channel = driverChannel(client, '127.0.0.1:27017')
    client.emit('serverHeartbeatSucceeded', {})
    client.emit('serverHeartbeatFailed', {failure: closedCheck})
    const error = (await commandCutBy(channel)) as Error
    assert.equal(error.name, 'TimeoutError')
  })

  it('no check failed yet (a host slow to accept): the abort', async () => {
    const error = (await commandCutBy(driverChannel(stalledClient(), '127.0.0.1:27017'))) as Error
    assert.equal(error.name, 'TimeoutError')
  })
})
