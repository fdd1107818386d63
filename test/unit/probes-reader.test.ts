/**
 * The read layer on a fake channel: each read names its command, returns the
 * parsed value with the raw reply and the server's clock from that reply, and
 * tells the recorder every read and every failure.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Timestamp} from 'bson'

import {type CommandChannel, type ReadEvent, ServerReader, serverTimeOf} from '../../src/probes/reader.js'
import {serverStatusCommand} from '../../src/probes/server-status.js'

type Reply = Record<string, unknown>

/** A channel that answers from a table by command name, or fails as the server would. */
function fakeChannel(answers: Record<string, Reply | Error>): CommandChannel & {sent: Reply[]} {
  const sent: Reply[] = []
  return {
    host: 'db1:27017',
    sent,
    async command(_db, command) {
      sent.push(command)
      const answer = answers[Object.keys(command)[0]!]
      if (answer === undefined) throw Object.assign(new Error(`no such command: '${Object.keys(command)[0]}'`), {code: 59, codeName: 'CommandNotFound'})
      if (answer instanceof Error) throw answer
      return answer
    },
  }
}

describe('ServerReader', () => {
  it('takes the server clock from localTime in the same reply', async () => {
    const localTime = new Date('2024-05-01T12:00:00Z')
    const reader = new ServerReader(fakeChannel({hello: {ok: 1, isWritablePrimary: true, localTime}}))
    const reading = await reader.hello()
    assert.equal(reading.host, 'db1:27017')
    assert.deepEqual(reading.serverTime, localTime)
    assert.equal((reading.raw as Reply).isWritablePrimary, true)
  })

  it('falls back to operationTime (seconds) when a reply has no localTime', () => {
    const time = serverTimeOf({ok: 1, operationTime: new Timestamp({t: 1_714_564_800, i: 3})})
    assert.deepEqual(time, new Date(1_714_564_800_000))
    assert.equal(serverTimeOf({ok: 1}), undefined, 'no clock in the reply: unknown, not the machine\'s')
  })

  it('asks isMaster where hello is not a command yet (4.2, early 4.4)', async () => {
    const channel = fakeChannel({isMaster: {ok: 1, ismaster: true, maxWireVersion: 8}})
    const reading = await new ServerReader(channel).hello()
    assert.equal((reading.raw as Reply).maxWireVersion, 8)
    assert.deepEqual(channel.sent.map((c) => Object.keys(c)[0]), ['hello', 'isMaster'])
  })

  it('tells the recorder every read and every failure, with the request', async () => {
    const events: ReadEvent[] = []
    const denied = Object.assign(new Error('not authorized on admin to execute command { serverStatus: 1 }'), {code: 13, codeName: 'Unauthorized'})
    const reader = new ServerReader(fakeChannel({buildInfo: {ok: 1, version: '7.0.14'}, serverStatus: denied}), (event) => events.push(event))
    await reader.buildInfo()
    await assert.rejects(reader.serverStatus(['connections']), /not authorized/)
    assert.deepEqual(events.map((e) => [e.name, e.error?.code ?? 'ok']), [['buildInfo', 'ok'], ['serverStatus', 13]])
    assert.equal((events[1]!.request as Reply).serverStatus, 1)
    assert.equal(events[1]!.error?.codeName, 'Unauthorized')
  })

  it('asks serverStatus for the sections it names and switches off the rest', () => {
    const command = serverStatusCommand(['connections', 'locks'])
    assert.equal(command.serverStatus, 1)
    assert.equal(command.connections, undefined, 'a wanted section is left at its default (sent)')
    assert.equal(command.locks, undefined)
    for (const heavy of ['wiredTiger', 'metrics', 'repl', 'tcmalloc']) assert.equal(command[heavy], 0, heavy)
  })

  it('refuses config reads on a channel that cannot query, naming the host', async () => {
    await assert.rejects(new ServerReader(fakeChannel({})).config('locks'), /db1:27017: this connection cannot read config\.locks/)
  })
})
