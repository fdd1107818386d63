#!/usr/bin/env node
// The secret guard goes first: everything loaded after it (oclif's DEBUG output included) prints through it.
const {installSecretGuard} = await import('../dist/src/cli/secret-guard.js')
installSecretGuard()
const {runPooltool} = await import('../dist/src/cli/main.js')
await runPooltool(import.meta.url)
