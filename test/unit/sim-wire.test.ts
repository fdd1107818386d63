/** Unit tests of src/wire: framing, OP_MSG / OP_QUERY / OP_REPLY codecs and SCRAM primitives. */
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {
  MSG_FLAG_CHECKSUM_PRESENT,
  MSG_FLAG_EXHAUST_ALLOWED,
  MSG_FLAG_MORE_TO_COME,
  MessageFramer,
  WireProtocolError,
  commandFromOpMsg,
  decodeOpMsg,
  decodeOpQuery,
  decodeOpReply,
  encodeOpMsg,
  encodeOpQuery,
  encodeOpReply,
  readHeader,
} from '../../src/wire/codec.js'
import {seededRandom} from '../../src/metrics/seeded-random.js'
import {
  ScramClient,
  buildServerFirst,
  deriveCredential,
  hi,
  mongoPasswordDigest,
  parseClientFinal,
  scramPassword,
  parseClientFirst,
  verifyClientProof,
  authMessage,
  escapeUsername,
  unescapeUsername,
} from '../../src/wire/scram.js'

describe('wire codec', () => {
  it('round-trips OP_MSG with a body, a document sequence and flags', () => {
    const buf = encodeOpMsg({
      requestID: 7,
      responseTo: 3,
      flags: MSG_FLAG_MORE_TO_COME | MSG_FLAG_EXHAUST_ALLOWED,
      body: {insert: 'c', $db: 'test'},
      sequences: [{identifier: 'documents', documents: [{a: 1}, {a: 2}]}],
    })
    const h = readHeader(buf)
    assert.deepEqual([h.messageLength, h.requestID, h.responseTo, h.opCode], [buf.length, 7, 3, 2013])
    const msg = decodeOpMsg(buf)
    assert.equal(msg.flags, MSG_FLAG_MORE_TO_COME | MSG_FLAG_EXHAUST_ALLOWED)
    assert.deepEqual(msg.sequences, [{identifier: 'documents', documents: [{a: 1}, {a: 2}]}])
    assert.deepEqual(commandFromOpMsg(msg), {insert: 'c', $db: 'test', documents: [{a: 1}, {a: 2}]})
  })

  it('strips a CRC-32C checksum when checksumPresent is set', () => {
    const plain = encodeOpMsg({requestID: 1, body: {ping: 1, $db: 'admin'}})
    const withCrc = Buffer.concat([plain, Buffer.from([1, 2, 3, 4])])
    withCrc.writeInt32LE(withCrc.length, 0)
    withCrc.writeUInt32LE(MSG_FLAG_CHECKSUM_PRESENT, 16)
    assert.deepEqual(decodeOpMsg(withCrc).body, {ping: 1, $db: 'admin'})
  })

  it('frames messages split across and packed into chunks', () => {
    const a = encodeOpMsg({body: {a: 1}})
    const b = encodeOpMsg({body: {b: 2}})
    const all = Buffer.concat([a, b])
    const framer = new MessageFramer()
    const got: Buffer[] = []
    for (let i = 0; i < all.length; i += 5) framer.push(all.subarray(i, i + 5), (m) => got.push(Buffer.from(m)))
    assert.equal(got.length, 2)
    assert.deepEqual(decodeOpMsg(got[1]).body, {b: 2})
    const packed: Buffer[] = []
    new MessageFramer().push(all, (m) => packed.push(m))
    assert.equal(packed.length, 2)
  })

  it('frames big and small messages however the stream is cut, length fields split included', () => {
    // A 200 kB message among small ones, cut at seeded random points: 1-byte pieces, pieces inside a length
    // field, pieces spanning several messages, and 64 kB socket-sized reads.
    const big = encodeOpMsg({body: {batch: Array.from({length: 2000}, (_, i) => ({_id: i, pad: 'x'.repeat(80)}))}})
    const messages = [encodeOpMsg({body: {a: 1}}), big, encodeOpMsg({body: {b: 2}}), big, encodeOpMsg({body: {c: 3}})]
    const stream = Buffer.concat(messages)
    const random = seededRandom(7)
    for (const maxPiece of [1, 3, 7, 100, 4096, 65_536, stream.length]) {
      const framer = new MessageFramer()
      const got: Buffer[] = []
      for (let at = 0; at < stream.length; ) {
        const piece = Math.max(1, Math.floor(random() * maxPiece))
        framer.push(stream.subarray(at, at + piece), (m) => got.push(Buffer.from(m)))
        at += piece
      }
      assert.deepEqual(got, messages, `pieces of at most ${maxPiece} bytes`)
      assert.equal(framer.bufferedBytes, 0)
    }
  })

  it('rejects a message larger than the 48 MB limit', () => {
    const header = Buffer.alloc(16)
    header.writeInt32LE(48_000_001, 0)
    assert.throws(() => new MessageFramer().push(header, () => undefined), WireProtocolError)
    // Its length field in pieces: refused as soon as the four bytes are in, not when 48 MB have come.
    const framer = new MessageFramer()
    framer.push(header.subarray(0, 1), () => undefined)
    framer.push(header.subarray(1, 3), () => undefined)
    assert.throws(() => framer.push(header.subarray(3, 4), () => undefined), WireProtocolError)
  })

  it('round-trips OP_QUERY and OP_REPLY', () => {
    const q = decodeOpQuery(encodeOpQuery({requestID: 9, fullCollectionName: 'admin.$cmd', query: {isMaster: 1}, numberToReturn: -1}))
    assert.equal(q.fullCollectionName, 'admin.$cmd')
    assert.equal(q.numberToReturn, -1)
    assert.deepEqual(q.query, {isMaster: 1})
    const r = decodeOpReply(encodeOpReply({responseTo: 9, documents: [{ok: 1}]}))
    assert.equal(r.responseTo, 9)
    assert.deepEqual(r.documents, [{ok: 1}])
  })
})

describe('SCRAM primitives', () => {
  it('matches the RFC 5802 SCRAM-SHA-1 example (plain password)', () => {
    const client = new ScramClient('SCRAM-SHA-1', 'user', 'unused', 'fyko+d2lbbFgONRv9qkxdawL')
    assert.equal(client.first(), 'n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL')
    const serverFirst = 'r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096'
    const salted = hi('SCRAM-SHA-1', 'pencil', Buffer.from('QSXCR+Q6sek8bf92', 'base64'), 4096)
    assert.equal(
      client.final(serverFirst, salted),
      'c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=',
    )
    assert.equal(client.verify('v=rmF9pqV8S7suAoZWja4dJRkFsKQ='), true)
    assert.equal(client.verify('v=AAAAAAAAAAAAAAAAAAAAAAAAAAA='), false)
  })

  it('matches the RFC 7677 SCRAM-SHA-256 example', () => {
    const client = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO')
    client.first()
    const serverFirst = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'
    assert.equal(
      client.final(serverFirst),
      'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
    )
    assert.equal(client.verify('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='), true)
  })

  it('uses the MongoDB password digest for SCRAM-SHA-1 and verifies on the server side', () => {
    assert.equal(mongoPasswordDigest('user', 'pencil'), '1c33006ec1ffd90f9cadcbcc0e118200')
    for (const mech of ['SCRAM-SHA-1', 'SCRAM-SHA-256'] as const) {
      const cred = deriveCredential(mech, 'alice', 's3cret', 5000)
      assert.equal(cred.iterationCount, 5000)
      const client = new ScramClient(mech, 'alice', 's3cret')
      const cf = parseClientFirst(client.first())
      const sf = buildServerFirst(cf.nonce + 'srv', cred.salt, cred.iterationCount)
      const fin = parseClientFinal(client.final(sf))
      const sig = verifyClientProof(mech, cred, authMessage(cf.bare, sf, fin.withoutProof), fin.proof)
      assert.ok(sig, `${mech} proof accepted`)
      assert.equal(client.verify(`v=${sig.toString('base64')}`), true)
      const wrong = new ScramClient(mech, 'alice', 'wrong')
      const wf = parseClientFirst(wrong.first())
      const sf2 = buildServerFirst(wf.nonce + 'srv', cred.salt, cred.iterationCount)
      const wfin = parseClientFinal(wrong.final(sf2))
      assert.equal(verifyClientProof(mech, cred, authMessage(wf.bare, sf2, wfin.withoutProof), wfin.proof), null)
    }
  })

  it('escapes user names and refuses low iteration counts', () => {
    assert.equal(escapeUsername('a=b,c'), 'a=3Db=2Cc')
    assert.equal(unescapeUsername('a=3Db=2Cc'), 'a=b,c')
    const c = new ScramClient('SCRAM-SHA-256', 'u', 'p', 'abc')
    c.first()
    assert.throws(() => c.final('r=abcdef,s=QSXCR+Q6sek8bf92,i=1000'), /iteration count/)
  })
})

describe('SASLprep of a SCRAM-SHA-256 password (RFC 4013)', () => {
  // The examples of RFC 4013 section 3, through the function both our client and the embedded
  // cluster's server prepare a password with.
  const prepared = (password: string) => scramPassword('SCRAM-SHA-256', 'user', password)

  it('maps, normalises (NFKC) and leaves plain ASCII alone, as the RFC shows', () => {
    assert.equal(prepared('I\u00ADX'), 'IX') // SOFT HYPHEN mapped to nothing
    assert.equal(prepared('user'), 'user')
    assert.equal(prepared('USER'), 'USER') // case is kept
    assert.equal(prepared('\u00AA'), 'a') // FEMININE ORDINAL INDICATOR
    assert.equal(prepared('\u2168'), 'IX') // ROMAN NUMERAL NINE
  })

  it('refuses a prohibited character and a mixed-direction string, as the RFC shows', () => {
    assert.throws(() => prepared('\u0007'), /Prohibited character/)
    assert.throws(() => prepared('\u0627\u0031'), /Bidirectional/)
  })

  it('SCRAM-SHA-1 hashes the MongoDB password digest, unprepared', () => {
    assert.equal(scramPassword('SCRAM-SHA-1', 'user', 'I\u00ADX'), mongoPasswordDigest('user', 'I\u00ADX'))
  })
})
