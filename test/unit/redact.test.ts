import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {makeScrubber, urisOfInvocation} from '../../src/cli/secret-guard.js'
import {privilegeHint, toPoolToolError} from '../../src/mongo/errors.js'
import {redactText, redactUri, secretsOfUri} from '../../src/redact.js'
import {parseTargetUri, resolveTarget} from '../../src/target.js'

describe('credential redaction', () => {
  it('removes userinfo and password-like options from URIs', () => {
    const redacted = redactUri('mongodb://alice:s3cr%40t@h1:27017,h2:27018/db?authSource=admin&tlsCertificateKeyFilePassword=pem-pass')
    assert.ok(!redacted.includes('s3cr'), redacted)
    assert.ok(!redacted.includes('pem-pass'), redacted)
    assert.ok(!redacted.includes('alice'), redacted)
    assert.match(redacted, /h1:27017,h2:27018/)
  })
  it('scrubs URIs and known secrets from free text', () => {
    const text = redactText('failed for mongodb://bob:hunter2@db:1/ (password hunter2 rejected)', ['hunter2'])
    assert.ok(!text.includes('hunter2'), text)
    assert.ok(!text.includes('bob:'), text)
  })
  it('redacts every URI alike however many it has met (its memory of redacted URIs is bounded and starts over)', () => {
    // 600 distinct URIs, twice over: more than the memory holds, so it empties and refills on the way.
    const broken: string[] = []
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 600; i++) {
        const redacted = redactUri(`mongodb://user${i}:secret-${i}@h${i}:27017/?tlsCertificateKeyFilePassword=pem-${i}`)
        assert.equal(redacted, `mongodb://<credentials>@h${i}:27017/?tlsCertificateKeyFilePassword=<credentials>`)
      }
      // One the parser rejects gets the same redaction, remembered or not.
      broken.push(redactUri('mongodb://bob:pw-in-broken@[::bad'))
    }
    assert.ok(broken[0]!.startsWith('mongodb://<credentials>@[::bad'), broken[0])
    assert.equal(broken[1], broken[0])
  })
  it('keeps secrets out of error messages built from driver errors', () => {
    const error = Object.assign(new Error('connection to mongodb://carol:pw-123@h:1 failed; pw-123'), {name: 'MongoServerSelectionError'})
    const failure = toPoolToolError(error, {target: 'mongodb://<credentials>@h:1', secrets: ['pw-123']})
    assert.equal(failure.code, 'UNREACHABLE')
    assert.ok(!JSON.stringify(failure.toJSON()).includes('pw-123'))
  })
})

describe('the secret guard (every write to stdout and stderr)', () => {
  const password = 'Zq7#p@ss:w/rd?x'
  const uri = `mongodb://alice:${encodeURIComponent(password)}@h:1/?authSource=admin`
  it('finds the URIs of --uri, --uri=, POOLTOOL_URI and MONGODB_URI', () => {
    assert.deepEqual(urisOfInvocation(['conns', 'list', '--uri', 'mongodb://a:b@h'], {}), ['mongodb://a:b@h'])
    assert.deepEqual(urisOfInvocation(['--uri=mongodb://a:b@h'], {POOLTOOL_URI: 'mongodb://c:d@h', MONGODB_URI: ''}), ['mongodb://a:b@h', 'mongodb://c:d@h'])
  })
  it('knows the password as typed and decoded, also in a URI that does not parse', () => {
    assert.ok(secretsOfUri(uri).includes(password))
    assert.ok(secretsOfUri('mongodb://bob:pw-in-broken@[::bad').includes('pw-in-broken'))
  })
  it("removes the password in every printed form: plain, URI-encoded, inspect's and JSON's quoting", () => {
    const scrub = makeScrubber([uri])
    for (const text of [uri, `argv: [ '--uri', '${uri}' ]`, `pwd ${password}`, JSON.stringify({uri}), `{ password: ${JSON.stringify(password)} }`]) {
      const clean = scrub(text)
      assert.ok(!clean.includes(password) && !clean.includes(encodeURIComponent(password)), clean)
    }
  })
  it('scrubs every write the same, the thousandth as the first (what it works out once is not used up)', () => {
    const scrub = makeScrubber([uri])
    const writes = [`argv: [ '--uri', '${uri}' ]`, 'nothing secret here', `pwd ${password}`]
    const first = writes.map(scrub)
    assert.ok(first.every((clean) => !clean.includes(password)), first.join('\n'))
    for (let i = 0; i < 1000; i++) assert.deepEqual(writes.map(scrub), first)
  })
  it("leaves other URIs alone: sim --auth prints its own test credentials on purpose", () => {
    const scrub = makeScrubber([uri])
    assert.equal(scrub('mongodb://pooltool:pooltool-sim@127.0.0.1:1/'), 'mongodb://pooltool:pooltool-sim@127.0.0.1:1/')
  })
  it('does not mangle text for a password too short to tell apart (it would show it anyway)', () => {
    assert.equal(redactText('password required', ['p']), 'password required')
  })
})

describe('target resolution', () => {
  it('refuses an empty or blank --uri instead of using the embedded cluster', async () => {
    for (const flagUri of ['', '   ']) {
      await assert.rejects(resolveTarget({flagUri, env: {}}), (error: Error & {code?: string; exitCode?: number}) => error.code === 'USAGE' && error.exitCode === 2)
    }
  })
  it('refuses a set-but-empty variable like an empty --uri, instead of using the embedded cluster', async () => {
    for (const env of [{MONGODB_URI: ''}, {POOLTOOL_URI: '  '}, {POOLTOOL_URI: '', MONGODB_URI: 'mongodb://m:1'}]) {
      await assert.rejects(resolveTarget({env}), (error: Error & {code?: string; exitCode?: number}) => error.code === 'USAGE' && error.exitCode === 2 && /is set but empty/.test(error.message), JSON.stringify(env))
    }
  })
  it('rejects hosts the driver cannot parse, before connecting', () => {
    for (const uri of ['mongodb://[::bad', 'mongodb://h:65536', 'mongodb://a:pw-777@h:99999']) {
      assert.throws(() => parseTargetUri(uri), (error: Error & {code?: string}) => error.code === 'INVALID_URI' && !error.message.includes('pw-777'))
    }
  })
  it('names a missing tlsCAFile as a usage error', () => {
    assert.throws(() => parseTargetUri('mongodb://h:1/?tls=true&tlsCAFile=/nonexistent/ca.pem'), (error: Error & {exitCode?: number}) => error.exitCode === 2 && /tlsCAFile/.test(error.message))
  })
  it('prefers --uri, then POOLTOOL_URI, then MONGODB_URI', async () => {
    const env = {POOLTOOL_URI: 'mongodb://p:1', MONGODB_URI: 'mongodb://m:1'}
    assert.equal((await resolveTarget({flagUri: 'mongodb://f:1', env})).source, '--uri')
    assert.equal((await resolveTarget({env})).source, 'POOLTOOL_URI')
    assert.equal((await resolveTarget({env: {MONGODB_URI: 'mongodb://m:1'}})).source, 'MONGODB_URI')
  })
  it('rejects a malformed URI with INVALID_URI and no secret in the message', () => {
    assert.throws(
      () => parseTargetUri('mongodb:/dave:pw-999@nowhere'),
      (error: Error & {code?: string; exitCode?: number}) => error.code === 'INVALID_URI' && error.exitCode === 3 && !error.message.includes('pw-999'),
    )
    assert.throws(() => parseTargetUri('http://example.com'), /invalid connection string/)
  })
})

describe('missing privileges', () => {
  it('names the role that grants what was refused', () => {
    assert.match(privilegeHint('not authorized on admin to execute command { serverStatus: 1, $db: "admin" }'), /clusterMonitor/)
    assert.match(privilegeHint('not authorized on config to execute command { find: "locks" }'), /clusterMonitor/)
    assert.match(privilegeHint('not authorized on pooltool_bench to execute command { insert: "bench" }'), /readWrite on pooltool_bench/)
  })
  it('maps code 13 to UNAUTHORIZED (exit 6) without repeating itself', () => {
    const error = Object.assign(new Error('not authorized on config to execute command { find: "locks" }'), {name: 'MongoServerError', code: 13, codeName: 'Unauthorized'})
    const failure = toPoolToolError(error, {target: 't', secrets: []})
    assert.equal(failure.exitCode, 6)
    assert.equal(failure.message, 'not authorized on config to execute command { find: "locks" }')
  })
})
