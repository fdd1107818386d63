/**
 * The keyFile's `__system@local` in the sim's user store: a user that authenticates and is authorized (the cluster's
 * own connections), but is not stored (`createSystemUserHandle`, authorization_manager_impl.cpp): usersInfo's list
 * and dropUser do not see it, and it reports no roles.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {grants} from '../../src/sim/auth/roles.js'
import {INTERNAL_USER, UserStore} from '../../src/sim/auth/users.js'

const COUNTS = {scramIterationCount: 5000, scramSHA256IterationCount: 5000}

describe('sim user store: __system@local', () => {
  it('is found for authentication with both SCRAM credentials once the key is set, and grants everything', async () => {
    const users = new UserStore()
    assert.equal(users.get('local', '__system'), undefined, 'no key, no internal user (auth off)')
    await users.setInternalKey('k3y-from-the-cluster', COUNTS)
    const rec = users.get(INTERNAL_USER.db, INTERNAL_USER.user)
    assert.ok(rec?.internal)
    assert.deepEqual(Object.keys(rec.credentials).sort(), ['SCRAM-SHA-1', 'SCRAM-SHA-256'])
    assert.ok(grants(rec.roles, {kind: 'clusterAdmin'}))
    assert.ok(grants(rec.roles, {kind: 'write', db: 'config'}))
    assert.equal(users.get('admin', '__system'), undefined, 'only on local')
  })

  it('is not a stored user: all() omits it and require() (dropUser, updateUser) does not find it', async () => {
    const users = new UserStore()
    await users.create('admin', 'root', 'pw', [{role: 'root', db: 'admin'}], ['SCRAM-SHA-256'], COUNTS)
    await users.setInternalKey('k3y', COUNTS)
    assert.deepEqual(users.all().map((u) => `${u.user}@${u.db}`), ['root@admin'])
    assert.throws(() => users.require('local', '__system'), (e: unknown) => (e as {code?: number}).code === 11)
  })
})
