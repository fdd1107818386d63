/**
 * src/mongo/lazy-saslprep.ts: the driver loads without building saslprep's Unicode tables, and the first
 * SCRAM-SHA-256 call (the driver's own `require('@mongodb-js/saslprep')`, or pooltool's ESM import in
 * src/wire/scram.ts) loads the real module and prepares a password exactly as it does. Its own file:
 * node --test runs each file in a fresh process, so the module cache starts empty.
 */
import assert from 'node:assert/strict'
import {createRequire} from 'node:module'
import {describe, it} from 'node:test'

// Resolved as the driver's SCRAM module resolves it.
const fromDriver = createRequire(createRequire(import.meta.url).resolve('mongodb'))
const tablesLoaded = () => Object.keys(fromDriver.cache).some((file) => file.replaceAll('\\', '/').includes('/@mongodb-js/saslprep/dist/memory-code-points.js'))

type SaslPrep = (input: string, options?: {allowUnassigned?: boolean}) => string

describe("saslprep loads when a password is prepared, not with the driver", () => {
  it('loading the driver builds no saslprep tables; the first call does, with the same result and errors', async () => {
    await import('../../src/mongo/driver.js')
    assert.ok(Object.keys(fromDriver.cache).some((file) => file.replaceAll('\\', '/').includes('/node_modules/mongodb/lib/cmap/auth/scram.js')), 'the driver (its SCRAM module included) loaded')
    assert.equal(tablesLoaded(), false, 'saslprep built its tables as the driver loaded')

    const asTheDriver = fromDriver('@mongodb-js/saslprep') as SaslPrep & {saslprep: SaslPrep; default: SaslPrep}
    assert.equal(typeof asTheDriver.saslprep, 'function')
    assert.equal(typeof asTheDriver.default, 'function')
    // RFC 4013's examples: a soft hyphen maps to nothing, a no-break space to a space; a control character is prohibited.
    assert.equal(asTheDriver.saslprep('I\u00ADX'), 'IX')
    assert.equal(tablesLoaded(), true)
    assert.equal(asTheDriver('a\u00A0b'), 'a b')
    assert.throws(() => asTheDriver.saslprep('\u0007'), /Prohibited character/)

    const esm = (await import('@mongodb-js/saslprep')) as {saslprep: SaslPrep; default: SaslPrep}
    assert.equal(esm.saslprep('user'), 'user')
    assert.equal(esm.default('I\u00ADX'), 'IX')
  })
})
