/** Logical-session commands: accepted and acknowledged (sessions are not tracked). */
import {UUID, type Document} from 'bson'
import type {CommandSpec} from './registry.js'

const ok = (): Document => ({ok: 1})

export const sessionCommands: CommandSpec[] = [
  {name: 'endSessions', handler: ok, noAuth: true},
  {name: 'killSessions', handler: ok},
  {name: 'killAllSessions', handler: ok},
  {name: 'killAllSessionsByPattern', handler: ok},
  {name: 'refreshSessions', handler: ok},
  {name: 'startSession', handler: () => ({id: {id: new UUID()}, timeoutMinutes: 30, ok: 1})},
]
