/**
 * `locks list/watch --db/--ns` on node locks, on a published document: the
 * fsyncLock printout (CSDN, MongoDB 3.4; test/fixtures/node-locks-documents.ts)
 * has the fsyncLockWorker holding Global in S, with no namespace; a write to
 * shop.orders arriving then waits behind it. Filtering by the write's database
 * keeps the chain whole, root blocker included, though the root itself has no
 * namespace; another database's filter drops it; waits and tickets are not
 * the filter's (per process).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {analyseBlocking} from '../../src/locks/node/blocking.js'
import {filterBlocking, namespaceFilterNote, operationMatches} from '../../src/locks/node/namespace-filter.js'
import {parseOperation, parseOperations} from '../../src/locks/node/operations.js'
import {fsyncLockCsdn} from '../fixtures/node-locks-documents.js'
import {NODE} from './fixtures/node-locks-constructed.js'

const write = parseOperation({opid: 9001, desc: 'conn77', op: 'insert', ns: 'shop.orders', waitingForLock: true, microsecs_running: 2_000_000, locks: {Global: 'w'}}, NODE)
const analysis = analyseBlocking({operations: [...parseOperations(fsyncLockCsdn, NODE), write]})

describe('node locks narrowed to a namespace', () => {
  it('the published printout plus a waiting write makes one chain rooted at the fsyncLockWorker, which has no namespace', () => {
    assert.equal(analysis.chains.length, 1)
    assert.equal(analysis.chains[0]!.root.operation.desc, 'fsyncLockWorker')
    assert.equal(analysis.chains[0]!.root.operation.ns, '')
  })

  it('--db shop keeps the chain whole, its root blocker included, and drops the unrelated operations', () => {
    const narrowed = filterBlocking(analysis, {db: 'shop'})
    assert.equal(narrowed.chains.length, 1)
    assert.equal(narrowed.chains[0]!.root.operation.opid, 6719)
    assert.deepEqual(narrowed.operations.map((op) => op.opid).sort(), [6719, 9001])
    assert.equal(narrowed.edges.length, analysis.edges.length)
  })

  it('--ns shop.orders matches the collection, --ns shop.customers and --db local do not keep the chain', () => {
    assert.equal(filterBlocking(analysis, {ns: 'shop.orders'}).chains.length, 1)
    assert.equal(filterBlocking(analysis, {ns: 'shop.customers'}).chains.length, 0)
    const local = filterBlocking(analysis, {db: 'local'})
    assert.equal(local.chains.length, 0)
    // The oplog getmore works in local: kept as an operation, with no edge to anything kept.
    assert.deepEqual(local.operations.map((op) => op.ns), ['local.oplog.$main'])
    assert.equal(local.edges.length, 0)
  })

  it('a database name matches its namespaces only: shop is not shopping', () => {
    const other = parseOperation({opid: 1, op: 'insert', ns: 'shopping.carts'}, NODE)
    assert.equal(operationMatches(other, {db: 'shop'}), false)
    assert.equal(operationMatches(other, {db: 'shopping'}), true)
  })

  it('no filter: the analysis as it was; the note says what stays whole', () => {
    assert.equal(filterBlocking(analysis, {}), analysis)
    assert.equal(namespaceFilterNote({}), undefined)
    assert.match(namespaceFilterNote({db: 'shop'})!, /database shop .*root blocker included.*lock waits and tickets are counted per process/)
  })
})
