// `node --import ./test/helpers/ts-loader.mjs …`: how the suite's processes run the TypeScript sources (see ts-hooks.mjs).
import {register} from 'node:module'

register('./ts-hooks.mjs', import.meta.url)
// esbuild's inline source maps: a failing assertion's stack names the line in the .ts file.
process.setSourceMapsEnabled(true)
