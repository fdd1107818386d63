/** SCRAM authentication, speculative authentication, authorization and user management (7.0 profile, auth on). */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {Binary, type Document} from 'bson'
import {MongoClient, MongoServerError} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {ScramClient, type ScramMechanism} from '../../src/wire/index.js'
import {RawClient, portOf, withParams} from '../helpers/sim.js'

function withUser(uri: string, user: string, pwd: string): string {
  return uri.replace(/^mongodb:\/\/[^@]*@/, `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@`)
}

function withoutUser(uri: string): string {
  return uri.replace(/^mongodb:\/\/[^@]*@/, 'mongodb://')
}

const text = (b: Binary) => Buffer.from(b.buffer.subarray(0, b.position)).toString('utf8')

describe('authentication and authorization', () => {
  let sim: SimCluster
  let root: MongoClient
  let port: number

  before(async () => {
    sim = await startSimCluster({auth: true, versionProfile: '7.0'})
    port = portOf(sim.info.processes[0].host)
    root = new MongoClient(sim.info.uri)
    await root.connect()
  })
  after(async () => {
    await root?.close()
    await sim?.stop()
  })

  async function securityCounters(): Promise<Document> {
    const ss = await root.db('admin').command({serverStatus: 1})
    return ss.security.authentication
  }

  it('publishes the root credentials in the URI', () => {
    assert.deepEqual(sim.info.credentials, {username: 'pooltool', password: 'pooltool-sim', authSource: 'admin'})
    assert.match(sim.info.uri, /^mongodb:\/\/pooltool:pooltool-sim@127\.0\.0\.1:\d+\/\?authSource=admin$/)
  })

  for (const mech of ['SCRAM-SHA-256', 'SCRAM-SHA-1'] as const) {
    it(`authenticates with ${mech} named in the URI`, async () => {
      const before = (await securityCounters()).mechanisms[mech].authenticate.successful
      const c = new MongoClient(withParams(sim.info.uri, `authMechanism=${mech}`), {maxPoolSize: 1})
      try {
        const status = await c.db('admin').command({connectionStatus: 1})
        assert.deepEqual(status.authInfo.authenticatedUsers, [{user: 'pooltool', db: 'admin'}])
      } finally {
        await c.close()
      }
      const afterCount = (await securityCounters()).mechanisms[mech].authenticate.successful
      assert.ok(afterCount > before, `${mech} successful counter grew`)
    })
  }

  it('rejects a wrong password with code 18', async () => {
    const c = new MongoClient(withUser(sim.info.uri, 'pooltool', 'not-the-password'), {serverSelectionTimeoutMS: 3000})
    try {
      await assert.rejects(c.connect(), (e: MongoServerError) => {
        assert.equal(e.code, 18)
        assert.equal(e.codeName, 'AuthenticationFailed')
        assert.equal(e.message, 'Authentication failed.')
        return true
      })
    } finally {
      await c.close()
    }
  })

  it('rejects commands on unauthenticated connections with code 13', async () => {
    const c = new MongoClient(withoutUser(sim.info.uri))
    try {
      assert.equal((await c.db('admin').command({ping: 1})).ok, 1)
      await assert.rejects(c.db('shop').collection('x').findOne({}), (e: MongoServerError) => {
        assert.equal(e.code, 13)
        assert.equal(e.codeName, 'Unauthorized')
        assert.equal(e.message, 'command find requires authentication')
        return true
      })
    } finally {
      await c.close()
    }
  })

  it('denies serverStatus to a user without clusterMonitor, allows it with the role', async () => {
    await root.db('shop').command({createUser: 'app', pwd: 'app-pw', roles: ['readWrite']})
    await root.db('admin').command({createUser: 'mon', pwd: 'mon-pw', roles: [{role: 'clusterMonitor', db: 'admin'}]})
    const app = new MongoClient(withUser(sim.info.uri, 'app', 'app-pw').replace('authSource=admin', 'authSource=shop'))
    const mon = new MongoClient(withUser(sim.info.uri, 'mon', 'mon-pw'))
    try {
      await app.db('shop').collection('items').insertOne({a: 1})
      assert.equal(await app.db('shop').collection('items').countDocuments(), 1)
      await assert.rejects(app.db('admin').command({serverStatus: 1}), (e: MongoServerError) => {
        assert.equal(e.code, 13)
        assert.match(e.message, /^not authorized on admin to execute command \{ serverStatus: 1/)
        return true
      })
      await assert.rejects(app.db('other').collection('x').insertOne({a: 1}), (e: MongoServerError) => e.code === 13)
      const ss = await mon.db('admin').command({serverStatus: 1})
      assert.ok(ss.connections.current >= 1)
      await assert.rejects(mon.db('shop').collection('items').insertOne({a: 2}), (e: MongoServerError) => e.code === 13)
      const info = await root.db('shop').command({usersInfo: 'app'})
      assert.deepEqual(info.users[0].roles, [{role: 'readWrite', db: 'shop'}])
      assert.deepEqual(info.users[0].mechanisms, ['SCRAM-SHA-1', 'SCRAM-SHA-256'])
      assert.equal(info.users[0].credentials, undefined)
    } finally {
      await app.close()
      await mon.close()
    }
  })

  it('counts one speculative SCRAM-SHA-256 authentication per new driver connection', async () => {
    const before = await securityCounters()
    const c = new MongoClient(sim.info.uri, {maxPoolSize: 3, minPoolSize: 0})
    let created = 0
    c.on('connectionCreated', () => created++)
    try {
      await Promise.all(Array.from({length: 3}, () => c.db('admin').command({ping: 1})))
      await c.db('x').collection('y').findOne({})
    } finally {
      await c.close()
    }
    const afterCounters = await securityCounters()
    const sha256Before = before.mechanisms['SCRAM-SHA-256']
    const sha256After = afterCounters.mechanisms['SCRAM-SHA-256']
    assert.ok(created >= 1)
    assert.equal(sha256After.speculativeAuthenticate.received - sha256Before.speculativeAuthenticate.received, created)
    assert.equal(sha256After.speculativeAuthenticate.successful - sha256Before.speculativeAuthenticate.successful, created)
    assert.equal(sha256After.authenticate.successful - sha256Before.authenticate.successful, created)
    assert.ok(afterCounters.saslSupportedMechsReceived > before.saslSupportedMechsReceived)
  })

  it('stores the SCRAM-SHA-256 iteration count in force when a user is created', async () => {
    const admin = root.db('admin')
    await assert.rejects(admin.command({setParameter: 1, scramSHA256IterationCount: 4000}), (e: MongoServerError) => e.code === 2)
    const was = await admin.command({setParameter: 1, scramSHA256IterationCount: 20000})
    assert.equal(was.was, 15000)
    await admin.command({createUser: 'slow', pwd: 'slow-pw', roles: ['root']})
    await admin.command({setParameter: 1, scramSHA256IterationCount: 15000})

    async function converse(mech: ScramMechanism, user: string, pwd: string): Promise<{iterations: number; verified: boolean; final: Document}> {
      const raw = await RawClient.open(port)
      try {
        await raw.command('admin', {hello: 1})
        const scram = new ScramClient(mech, user, pwd)
        const start = await raw.command('admin', {saslStart: 1, mechanism: mech, payload: new Binary(Buffer.from(scram.first())), options: {skipEmptyExchange: true}})
        assert.equal(start.ok, 1, JSON.stringify(start))
        assert.equal(start.done, false)
        const clientFinal = scram.final(text(start.payload))
        const fin = await raw.command('admin', {saslContinue: 1, conversationId: start.conversationId, payload: new Binary(Buffer.from(clientFinal))})
        const verified = fin.ok === 1 && scram.verify(text(fin.payload))
        if (verified) {
          const status = await raw.command('admin', {connectionStatus: 1})
          assert.deepEqual(status.authInfo.authenticatedUsers, [{user, db: 'admin'}])
        }
        return {iterations: scram.serverFirst!.iterationCount, verified, final: fin}
      } finally {
        await raw.close()
      }
    }
    const slow = await converse('SCRAM-SHA-256', 'slow', 'slow-pw')
    assert.equal(slow.iterations, 20000)
    assert.equal(slow.verified, true)
    assert.equal(slow.final.done, true, 'skipEmptyExchange honoured on 4.4+ profiles')
    const rootConv = await converse('SCRAM-SHA-256', 'pooltool', 'pooltool-sim')
    assert.equal(rootConv.iterations, 15000)
    const sha1 = await converse('SCRAM-SHA-1', 'pooltool', 'pooltool-sim')
    assert.equal(sha1.iterations, 10000)
    const bad = await converse('SCRAM-SHA-256', 'slow', 'wrong')
    assert.equal(bad.verified, false)
    assert.equal(bad.final.code, 18)
  })

  it('refuses unknown mechanisms and unknown users', async () => {
    const raw = await RawClient.open(port)
    try {
      const r = await raw.command('admin', {saslStart: 1, mechanism: 'PLAIN', payload: new Binary(Buffer.from('x'))})
      assert.equal(r.ok, 0)
      assert.equal(r.code, 2)
      const s = new ScramClient('SCRAM-SHA-256', 'nobody', 'x')
      const u = await raw.command('admin', {saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(Buffer.from(s.first()))})
      assert.equal(u.code, 18)
    } finally {
      await raw.close()
    }
  })

  it('updates and drops users', async () => {
    const admin = root.db('admin')
    await admin.command({createUser: 'tmp', pwd: 'one', roles: ['root']})
    await admin.command({updateUser: 'tmp', pwd: 'two'})
    const c = new MongoClient(withUser(sim.info.uri, 'tmp', 'two'))
    try {
      assert.equal((await c.db('admin').command({ping: 1})).ok, 1)
      await c.db('admin').command({connectionStatus: 1})
    } finally {
      await c.close()
    }
    await admin.command({dropUser: 'tmp'})
    await assert.rejects(admin.command({dropUser: 'tmp'}), (e: MongoServerError) => e.code === 11)
    await assert.rejects(admin.command({createUser: 'pooltool', pwd: 'x', roles: []}), (e: MongoServerError) => e.code === 51003)
  })
})
