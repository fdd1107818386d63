/**
 * The driver's SCRAM module requires @mongodb-js/saslprep as it loads, and saslprep builds its Unicode
 * tables right then (a gunzip and six bitfields, about a tenth of the driver's whole load) although only
 * a SCRAM-SHA-256 handshake with a password ever calls it: an unauthenticated run, x509 or SCRAM-SHA-1
 * never does. This module puts a stand-in of the same shape (a function that is also its own `saslprep`
 * and `default`) in the CommonJS cache under saslprep's own file before the driver loads; the first
 * call loads the real module (which then takes its place in the cache) and passes the call on, so a
 * password is prepared exactly as before, errors included.
 *
 * src/mongo/driver.ts imports this first: ES modules evaluate their imports in order.
 */
import Module, {createRequire} from 'node:module'

type SaslPrep = ((input: string, options?: {allowUnassigned?: boolean}) => string) & {saslprep: SaslPrep; default: SaslPrep}

// Resolved from the driver's own directory, so the stand-in sits exactly where its require looks.
const fromDriver = createRequire(createRequire(import.meta.url).resolve('mongodb'))
const file = fromDriver.resolve('@mongodb-js/saslprep')

if (fromDriver.cache[file] === undefined) {
  let real: SaslPrep | undefined
  const load = (): SaslPrep => {
    if (real === undefined) {
      delete fromDriver.cache[file]
      real = fromDriver('@mongodb-js/saslprep') as SaslPrep
    }
    return real
  }
  const lazy = ((input: string, options?: {allowUnassigned?: boolean}) => load()(input, options)) as SaslPrep
  lazy.saslprep = lazy
  lazy.default = lazy
  const standIn = new Module(file)
  standIn.filename = file
  standIn.loaded = true
  standIn.exports = lazy
  fromDriver.cache[file] = standIn
}
