#!/usr/bin/env node
// Build step (npm run build, after tsc): bundles the embedded cluster's child process (dist/src/sim/child.js
// and the ~70 modules it imports) into one file, dist/src/sim/child.bundle.js, which src/sim/host.ts forks.
// Why: on Node 20 the ESM loader's resolve / read / link of each module cost the child about 0.1 s of CPU
// per start, a third of a standalone's start, and the test suite starts ~130 clusters. The packages
// (bson, @mongodb-js/saslprep) stay outside, resolved from node_modules as before; the code is tsc's
// output, unchanged, with its source maps followed back to src/.
import {statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const entry = path.join(root, 'dist', 'src', 'sim', 'child.js')
const outfile = path.join(root, 'dist', 'src', 'sim', 'child.bundle.js')
statSync(entry) // a missing tsc output fails here, with the path, before esbuild says anything
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
})
