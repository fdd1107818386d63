/**
 * The command table of a simulated mongod. A mongos (sharded topology) would start from
 * `mongodCommands().clone()` and `override()` the routed commands.
 */
import {aggregateCommands} from './aggregate.js'
import {authCommands} from './auth.js'
import {crudCommands} from './crud.js'
import {ddlCommands} from './ddl.js'
import {diagnosticCommands} from './diagnostic.js'
import {fsyncCommands} from './fsync.js'
import {helloCommands} from './hello.js'
import {lockInfoCommands} from './lock-info.js'
import {CommandRegistry} from './registry.js'
import {replSetCommands} from './replset.js'
import {sessionCommands} from './sessions.js'
import {userCommands} from './users.js'

let mongod: CommandRegistry | null = null

export function mongodCommands(): CommandRegistry {
  mongod ??= new CommandRegistry().registerAll([
    ...helloCommands,
    ...authCommands,
    ...diagnosticCommands,
    ...fsyncCommands,
    ...lockInfoCommands,
    ...sessionCommands,
    ...crudCommands,
    ...aggregateCommands,
    ...ddlCommands,
    ...userCommands,
    ...replSetCommands,
  ])
  return mongod
}
