#!/usr/bin/env -S node --import tsx
// The secret guard goes first: everything loaded after it (the DEBUG output of oclif included) prints through it.
import {installSecretGuard} from '../src/cli/secret-guard.ts'

installSecretGuard()
const main = await import('../src/cli/main.ts')
await main.runPooltool(import.meta.url, {development: true})
