/** Lock-ping process ids as the server builds them: `host:port:epochSeconds:<signed 64-bit random>`. */
import assert from 'node:assert/strict'
import {test} from 'node:test'

import {generateProcessId} from '../../src/sim/sharding/dist-lock.js'
import {parseProcessId} from '../../src/locks/parse.js'

test('the random part is a signed 64-bit value (negative about half the time), and pooltool parses it', () => {
  const ids = Array.from({length: 64}, () => generateProcessId('db1.example.net:27018', Date.parse('2024-01-02T03:04:05Z')))
  const randoms = ids.map((id) => BigInt(id.split(':').at(-1)!))
  assert.ok(randoms.some((r) => r < 0n) && randoms.some((r) => r > 0n), 'both signs appear among 64 ids')
  assert.ok(randoms.some((r) => r > 2n ** 31n || r < -(2n ** 31n)), 'beyond 31 bits')
  for (const id of ids) assert.deepEqual(parseProcessId(id), {kind: 'host', host: 'db1.example.net:27018', epochSeconds: 1704164645, random: id.split(':').at(-1)}, id)
})
