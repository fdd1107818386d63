/** The URI a replay prints: the captured seeds' listeners, the captured options minus what a loopback replay cannot serve. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {replayUri} from '../../src/replay/uri.js'

const listeners = new Map([
  ['mongo-0.svc:27017', '127.0.0.1:5001'],
  ['localhost:27017', '127.0.0.1:5001'],
  ['mongo-1.svc:27017', '127.0.0.1:5002'],
])

describe('replay URI', () => {
  it('keeps directConnection and replicaSet, points at the entry listener', () => {
    assert.equal(replayUri('mongodb://localhost:27017/?directConnection=true', ['localhost:27017'], listeners, '127.0.0.1:9'), 'mongodb://127.0.0.1:5001/?directConnection=true')
    assert.equal(
      replayUri('mongodb://mongo-0.svc:27017,mongo-1.svc:27017/?replicaSet=rs0&readPreference=secondaryPreferred', ['mongo-0.svc:27017', 'mongo-1.svc:27017'], listeners, '127.0.0.1:9'),
      'mongodb://127.0.0.1:5001,127.0.0.1:5002/?replicaSet=rs0&readPreference=secondaryPreferred',
    )
  })

  it('drops TLS, authentication, SRV, load-balancer and compression options', () => {
    const uri = replayUri('mongodb://localhost:27017/?tls=true&tlsCAFile=/ca.pem&authSource=admin&authMechanism=SCRAM-SHA-256&compressors=snappy&loadBalanced=false&appName=ops', ['localhost:27017'], listeners, '127.0.0.1:9')
    assert.equal(uri, 'mongodb://127.0.0.1:5001/?appName=ops')
  })

  it('falls back to the first host when no seed was captured (a seed list of names that never answered)', () => {
    assert.equal(replayUri('mongodb+srv://cluster0.example.net/', ['cluster0.example.net'], listeners, '127.0.0.1:5001'), 'mongodb://127.0.0.1:5001/')
  })
})
