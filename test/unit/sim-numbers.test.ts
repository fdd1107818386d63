/** Exact number types in the sim's store: decode form, arithmetic result types, expression types. */
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {Decimal128, Double, Int32, Long, deserialize, serialize, type Document} from 'bson'
import {runPipeline} from '../../src/sim/storage/aggregate.js'
import {EXACT_DECODE, arithmetic, numberKind, toExactForm} from '../../src/sim/storage/numbers.js'

/** What a value becomes after the sim decodes it and serializes it back (the wire round trip). */
function roundTrip(v: unknown): unknown {
  const stored = toExactForm(deserialize(serialize({v}), EXACT_DECODE)).v
  return deserialize(serialize({v: stored}), EXACT_DECODE).v
}

const kindOf = (v: unknown) => (v as {_bsontype?: string})._bsontype

describe('exact number form', () => {
  it('keeps every number type through decode and re-encode', () => {
    assert.equal(kindOf(roundTrip(new Int32(5))), 'Int32')
    assert.equal(kindOf(roundTrip(new Double(5))), 'Double')
    assert.equal(kindOf(roundTrip(new Double(2 ** 40))), 'Double')
    assert.equal(kindOf(roundTrip(new Double(-0))), 'Double')
    assert.equal(kindOf(roundTrip(Long.fromNumber(5))), 'Long')
    assert.equal(kindOf(roundTrip(Long.fromNumber(2 ** 40))), 'Long')
    assert.equal(kindOf(roundTrip(Decimal128.fromString('5'))), 'Decimal128')
  })

  it('keeps int32 as a plain number so handlers read arguments unchanged', () => {
    const cmd = toExactForm(deserialize(serialize({find: 'c', limit: 5, nested: [{x: 1}]}), EXACT_DECODE))
    assert.equal(cmd.limit, 5)
    assert.equal(cmd.nested[0].x, 1)
  })

  it('widens results like SafeNum: int overflow to long, long overflow to double', () => {
    assert.equal(arithmetic('add', 2, 3), 5)
    assert.equal(numberKind(arithmetic('add', 2 ** 31 - 1, 1)), 'long')
    assert.equal(numberKind(arithmetic('add', Long.MAX_VALUE, 1)), 'double')
    assert.equal(numberKind(arithmetic('multiply', 3, new Double(2))), 'double')
    assert.equal(numberKind(arithmetic('subtract', Long.fromNumber(3), 1)), 'long')
    assert.equal(numberKind(arithmetic('add', Decimal128.fromString('1.5'), 1)), 'decimal')
  })

  it('types expression results as mongod: $add of ints is an int, $divide a double, $sum overflows to long', () => {
    const [out] = runPipeline(
      [{a: 6, b: 3, big: 2 ** 31 - 1, l: Long.fromNumber(4)}],
      [{$project: {add: {$add: ['$a', '$b']}, div: {$divide: ['$a', '$b']}, sum: {$sum: ['$big', '$big']}, mod: {$mod: ['$l', '$b']}, t: {$type: '$l'}}}],
    ) as Document[]
    assert.equal(out.add, 9)
    assert.equal(kindOf(out.div), 'Double')
    assert.equal(kindOf(out.sum), 'Long')
    assert.equal(kindOf(out.mod), 'Long')
    assert.equal(out.t, 'long')
  })
})
