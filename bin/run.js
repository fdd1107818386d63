#!/usr/bin/env node
// The secret guard goes first: everything loaded after it (the DEBUG output of oclif included) prints through it.
import {installSecretGuard} from '../dist/src/cli/secret-guard.js'

installSecretGuard()
const main = await import('../dist/src/cli/main.js')
await main.runPooltool(import.meta.url)
