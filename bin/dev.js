#!/usr/bin/env -S node --import tsx
// The secret guard goes first: everything loaded after it (oclif's DEBUG output included) prints through it.
const {installSecretGuard} = await import('../src/cli/secret-guard.ts')
installSecretGuard()
const {runPooltool} = await import('../src/cli/main.ts')
await runPooltool(import.meta.url, {development: true})
